/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// This file is what an apply means to the operator: "create the object, or update the one I
// control". A name is not an identity: a user's claim, another controller's Role, or the Service
// of a second owner can carry the very name the operator would write. So the operator decides by
// the controller reference (owner UID) on the live object, and pins the apply to the UID it read,
// as Cluster API's internal/util/ssa does, so that an apply can neither adopt a different object
// nor re-create one deleted in between.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StepOwnership is checking that the existing object is the operator's to write.
const StepOwnership Step = "not the operator's to write"

// NotControlled is an existing object the operator would write, but which its expected owner does
// not control: a user's object, another controller's, or a second owner's of the same name. The
// operator leaves it untouched and says so; it is never adopted.
type NotControlled struct {
	// Want is the owner the operator writes the object for ("InferenceService llama").
	Want string
	// Controller is who controls the object ("ModelRouter chat"), empty when nobody does.
	Controller string
}

func (e *NotControlled) Error() string {
	who := "it has no controller: someone else created it"
	if e.Controller != "" {
		who = "it is controlled by " + e.Controller
	}
	return fmt.Sprintf("it exists and %s does not control it (%s): the operator leaves it untouched; delete or rename it, or give %s another name", e.Want, who, e.Want)
}

// IsNotControlled says whether err is (or wraps) a NotControlled refusal.
func IsNotControlled(err error) bool {
	var nc *NotControlled
	return errors.As(err, &nc)
}

// ExpectedController is the controller owner reference an apply configuration carries (every
// object the operator writes has one), nil when it carries none.
func ExpectedController(desired any) *metav1ac.OwnerReferenceApplyConfiguration {
	m := objectMeta(desired)
	if m == nil {
		return nil
	}
	for i := range m.OwnerReferences {
		if r := &m.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// CheckControlled says whether live is the object desired may write: live's controller reference
// has the UID of desired's. A desired object without a controller reference checks nothing.
func CheckControlled(live metav1.Object, desired any) error {
	want := ExpectedController(desired)
	if want == nil || want.UID == nil {
		return nil
	}
	return checkController(live, deref(want.Kind)+" "+deref(want.Name), *want.UID)
}

// CheckControlledBy is CheckControlled for an object the operator does not write but acts on or
// reports on (a workload an HPA would scale, a backend's Service a router would send traffic to):
// live must be controlled by owner, of kind ownerKind.
func CheckControlledBy(live metav1.Object, ownerKind string, owner metav1.Object) error {
	return checkController(live, ownerKind+" "+owner.GetName(), owner.GetUID())
}

func checkController(live metav1.Object, want string, uid types.UID) error {
	ref := metav1.GetControllerOfNoCopy(live)
	if ref != nil && ref.UID == uid {
		return nil
	}
	nc := &NotControlled{Want: want}
	if ref != nil {
		nc.Controller = ref.Kind + " " + ref.Name
	}
	return nc
}

// Get reads the object named key into obj from reader (the cache) and, when the cache does not
// have it, from the API server (a.Reader). It says whether the object exists.
//
// Note: the caches hold only objects labelled as the operator's (see controllers.CacheOptions), so
// a cache miss is not "absent": a user's object of the same name, or one the operator wrote before
// it labelled its objects, is only seen by the live read. The read costs a request only when the
// cache misses, i.e. when the object is about to be created, never in steady state.
func (a Applier) Get(ctx context.Context, reader client.Reader, key client.ObjectKey, obj client.Object) (bool, error) {
	err := reader.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && a.Reader != nil {
		err = a.Reader.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// pinUID makes an apply of desired update the object with uid, never create one: if the object
// was deleted (and maybe created again by someone else) since it was read, the API server refuses
// the apply instead of creating or taking over another object.
func pinUID(desired any, uid types.UID) {
	if m := objectMeta(desired); m != nil && uid != "" {
		m.UID = &uid
	}
}

// objectMeta is the embedded ObjectMetaApplyConfiguration of a generated apply configuration
// (every one has it; none has a getter for the owner references or the UID).
func objectMeta(ac any) *metav1ac.ObjectMetaApplyConfiguration {
	v := reflect.ValueOf(ac)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("ObjectMetaApplyConfiguration")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return nil
	}
	m, _ := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The label on every object the operator writes. The operator's caches hold only objects that
// carry it (controllers.CacheOptions), so its memory follows its own objects, not the cluster's.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "llmkube-operator"
)

// MarkManaged adds the managed-by label to what desired applies. It runs before the comparison
// with the owned fields, so an object that already carries it costs no write. A preview of the
// operator's apply (the kubectl plugin's diff) calls it too, so it shows what the operator sends.
func MarkManaged(desired any) {
	m := objectMeta(desired)
	if m == nil {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[LabelManagedBy] = ManagedBy
}

// LabelledKinds are the kinds the operator writes, whose caches hold only the objects labelled
// LabelManagedBy (controllers.CacheOptions): a cache miss of one of them is not "absent".
func LabelledKinds() []client.Object {
	return []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{}, &autoscalingv2.HorizontalPodAutoscaler{},
		&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}, &corev1.PersistentVolumeClaim{},
	}
}

// labelled says whether obj is of one of LabelledKinds.
func labelled(obj client.Object) bool {
	t := reflect.TypeOf(obj)
	for _, k := range LabelledKinds() {
		if reflect.TypeOf(k) == t {
			return true
		}
	}
	return false
}

// Through is reader (the cache) read past on a miss as Get does: the reader a plan's Observe
// gets in the reconciler, so that the plan sees the objects the label-restricted caches leave out.
// A miss of any other kind (a Model, an InferenceService, a Secret's metadata) is authoritative,
// as those caches are not restricted, and costs no request.
func (a Applier) Through(reader client.Reader) client.Reader {
	return throughReader{Reader: reader, a: a}
}

type throughReader struct {
	client.Reader
	a Applier
}

func (t throughReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := t.Reader.Get(ctx, key, obj, opts...)
	if past := t.a.Past(); apierrors.IsNotFound(err) && past != nil && labelled(obj) {
		err = past.Get(ctx, key, obj, opts...)
	}
	return err
}

// Past reads what the operator's caches leave out: the API server (Reader), asked only when the
// Foreign cache does not know the name to be free. Nil when the applier has no Reader.
func (a Applier) Past() client.Reader {
	if a.Reader == nil {
		return nil
	}
	return pastReader{Reader: a.Reader, foreign: a.Foreign}
}

type pastReader struct {
	client.Reader
	foreign *ForeignNames
}

func (p pastReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if p.foreign.Absent(ctx, obj, key) {
		// The answer the API server would give (the resource is named as the kind's plural, which
		// holds for every kind ForeignNames holds).
		return apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(KindOfObject(obj)) + "s"}, key.Name)
	}
	return p.Reader.Get(ctx, key, obj, opts...)
}
