/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	llmkubeac "github.com/llmkube/operator/applyconfig"
)

// ReasonOwnershipConflict is the reason of the Warning Event recorded when another manager took
// a field the operator applies and the operator's forced apply takes it back.
const ReasonOwnershipConflict = "OwnershipConflict"

// Conflict is one field the operator applies that another manager changed and now owns.
type Conflict struct {
	// Path is the field, in managedFields notation, e.g.
	// .spec.template.spec.containers[name="model"].image.
	Path string
	// Managers are the managers that own the field now (sorted), with their operation when it
	// is an Update: "person (Update)".
	Managers []string
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s (now owned by %s)", c.Path, strings.Join(c.Managers, ", "))
}

// DetectConflicts lists the fields of desired that, on live, are owned by a manager other than
// manager, are no longer owned by manager, and hold a value other than desired's. Those are the
// fields a forced apply of desired would take back from someone: a person's `kubectl edit`, a
// conflicting `kubectl apply --force-conflicts`, another controller.
//
// Note: fields another manager co-owns with the same value are not conflicts (server-side apply
// shares them), and neither are fields no one else owns; a field the operator still owns but
// wants to change is its own change, not a conflict. Only the main resource's managedFields
// count; status and scale subresource entries are other writers' business.
func DetectConflicts(tc managedfields.TypeConverter, live client.Object, desired any, manager string) ([]Conflict, error) {
	desiredU, err := ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("desired configuration: %w", err)
	}
	liveU, err := ToUnstructured(live)
	if err != nil {
		return nil, fmt.Errorf("live object: %w", err)
	}
	// A typed object read by the client often has no apiVersion/kind: the desired configuration
	// always has them.
	liveU.SetGroupVersionKind(desiredU.GroupVersionKind())
	liveU.SetManagedFields(nil)

	desiredTV, err := tc.ObjectToTyped(desiredU, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing desired configuration: %w", err)
	}
	liveTV, err := tc.ObjectToTyped(liveU, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing live object: %w", err)
	}
	desiredSet, err := desiredTV.ToFieldSet()
	if err != nil {
		return nil, err
	}

	ours := &fieldpath.Set{}
	others := map[string]*fieldpath.Set{}
	for _, e := range live.GetManagedFields() {
		if e.Subresource != "" {
			continue
		}
		set, err := EntrySet(e)
		if err != nil {
			return nil, err
		}
		if e.Manager == manager {
			ours = ours.Union(set)
			continue
		}
		name := e.Manager
		if e.Operation == "Update" {
			name += " (Update)"
		}
		if prev, ok := others[name]; ok {
			set = prev.Union(set)
		}
		others[name] = set
	}

	candidates := desiredSet.Leaves().Difference(ours)
	byPath := map[string]*Conflict{}
	var order []string
	for name, set := range others {
		taken := candidates.Intersection(set)
		var err error
		taken.Iterate(func(p fieldpath.Path) {
			if err != nil {
				return
			}
			var differs bool
			if differs, err = valuesDiffer(liveTV, desiredTV, p); err != nil || !differs {
				return
			}
			key := p.String()
			c, ok := byPath[key]
			if !ok {
				c = &Conflict{Path: key}
				byPath[key] = c
				order = append(order, key)
			}
			c.Managers = append(c.Managers, name)
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(order)
	var out []Conflict
	for _, k := range order {
		c := byPath[k]
		slices.Sort(c.Managers)
		out = append(out, *c)
	}
	return out, nil
}

// valuesDiffer compares one field of live and desired, list keys and all.
func valuesDiffer(live, desired *typed.TypedValue, p fieldpath.Path) (bool, error) {
	one := fieldpath.NewSet(p)
	l := live.ExtractItems(one)
	d := desired.ExtractItems(one)
	cmp, err := l.Compare(d)
	if err != nil {
		return false, err
	}
	return !cmp.IsSame(), nil
}

// typeConverter tries each converter in turn: the first that knows an object's kind types it.
type typeConverter []managedfields.TypeConverter

// NewTypeConverter returns a converter for every kind the operator applies: the built-in kinds
// (client-go's schema), the llmkube ones (the generated one), and the kinds of more, such as the
// Gateway API's, as registered in scheme.
func NewTypeConverter(scheme *runtime.Scheme, more ...managedfields.TypeConverter) managedfields.TypeConverter {
	return append(typeConverter{clientgoac.NewTypeConverter(scheme), llmkubeac.NewTypeConverter(scheme)}, more...)
}

func (t typeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	var err error
	for _, c := range t {
		var tv *typed.TypedValue
		if tv, err = c.ObjectToTyped(obj, opts...); err == nil {
			return tv, nil
		}
	}
	return nil, err
}

func (t typeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return t[0].TypedToObject(v)
}

// reportConflictsPastLag is reportConflicts for a read that lags behind this process's last apply
// to the object, when the apply now wants something else: what another manager changed after that
// apply is not in the read, and the forced apply would take it back unreported. So the conflicts
// are detected on the API server's copy (a.Reader; one GET, only in this case). Without a reader
// nothing is reported: the read would only repeat what the last apply already reported.
func (a Applier) reportConflictsPastLag(ctx context.Context, c Change) {
	if a.Reader == nil || a.Recorder == nil || c.Owner == nil || c.Live == nil {
		return
	}
	fresh := reflect.New(reflect.TypeOf(c.Live).Elem()).Interface().(client.Object)
	if err := a.Reader.Get(ctx, client.ObjectKeyFromObject(c.Live), fresh); err != nil {
		log.FromContext(ctx).Error(err, "reading past a lagging cache for ownership conflicts; applying without reporting them",
			"kind", kindOf(c.Desired), "object", client.ObjectKeyFromObject(c.Live).String())
		return
	}
	if fresh.GetUID() != c.Live.GetUID() {
		return // replaced: the apply, pinned to the UID read, fails
	}
	c.Live = fresh
	a.reportConflicts(ctx, c)
}

// reportConflicts records one Warning Event on c.Owner naming the fields another manager took
// and who took them, before the forced apply takes them back. It never fails the apply: an error
// of the detection is logged, and the apply goes ahead.
func (a Applier) reportConflicts(ctx context.Context, c Change) {
	if a.Recorder == nil || c.Owner == nil || c.Live == nil || a.Client == nil {
		return
	}
	types := a.Types
	if types == nil {
		types = NewTypeConverter(a.Client.Scheme())
	}
	// An object read past the cache (the API reader, a migration's answer) carries no kind, which
	// the type converter needs.
	if c.Live.GetObjectKind().GroupVersionKind().Empty() {
		if gvk, err := apiutil.GVKForObject(c.Live, a.Client.Scheme()); err == nil {
			c.Live.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	conflicts, err := DetectConflicts(types, c.Live, c.Desired, a.FieldManager)
	if err != nil {
		log.FromContext(ctx).Error(err, "detecting ownership conflicts; applying without reporting them",
			"kind", kindOf(c.Desired), "object", client.ObjectKeyFromObject(c.Live).String())
		return
	}
	if len(conflicts) == 0 {
		return
	}
	parts := make([]string, len(conflicts))
	for i, cf := range conflicts {
		parts[i] = cf.String()
	}
	kind := kindOf(c.Desired)
	countConflicts(kind, conflicts)
	a.Recorder.Eventf(c.Owner, c.Live, corev1.EventTypeWarning, ReasonOwnershipConflict, "ForceApply",
		"%s %s: another manager changed fields %s applies: %s; restoring %s's values",
		kind, client.ObjectKeyFromObject(c.Live), a.FieldManager, strings.Join(parts, "; "), a.FieldManager)
}

func kindOf(ac any) string {
	if k, ok := ac.(interface{ GetKind() *string }); ok && k.GetKind() != nil {
		return *k.GetKind()
	}
	return "object"
}
