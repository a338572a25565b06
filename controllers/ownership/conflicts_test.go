/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const op = "llmkube-operator"

var gvkDeployment = appsv1.SchemeGroupVersion.WithKind("Deployment")

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// deploymentAC is what the operator applies, with the knobs the cases turn.
func deploymentAC(image, team string, env map[string]string) *appsv1ac.DeploymentApplyConfiguration {
	c := corev1ac.Container().WithName("model").WithImage(image)
	for _, k := range []string{"A", "B"} {
		if v, ok := env[k]; ok {
			c.WithEnv(corev1ac.EnvVar().WithName(k).WithValue(v))
		}
	}
	return appsv1ac.Deployment("web", "ns").WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metaSelector()).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(map[string]string{"app": "web", "team": team}).
			WithSpec(corev1ac.PodSpec().WithContainers(c))))
}

func metaSelector() *metav1ac.LabelSelectorApplyConfiguration {
	return metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})
}

func u(t *testing.T, v any) *unstructured.Unstructured {
	t.Helper()
	obj, err := ToUnstructured(v)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// history replays writes on an in-memory field manager (the API server's own code) and returns
// the live Deployment with its managedFields.
type write struct {
	manager string
	update  bool // an Update (kubectl edit) instead of an apply
	force   bool
	obj     any
}

func replay(t *testing.T, writes ...write) *appsv1.Deployment {
	t.Helper()
	tc := NewTypeConverter(scheme(t))
	fm := managedfieldstest.NewTestFieldManager(tc, gvkDeployment)
	for _, w := range writes {
		obj := u(t, w.obj)
		var err error
		if w.update {
			err = fm.Update(obj, w.manager)
		} else {
			err = fm.Apply(obj, w.manager, w.force)
		}
		if err != nil {
			t.Fatalf("%s: %v", w.manager, err)
		}
	}
	live := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fm.Live().(*unstructured.Unstructured).Object, live); err != nil {
		t.Fatal(err)
	}
	return live
}

// edit returns the live object as a person's editor would send it back, after change.
func edit(t *testing.T, live *appsv1.Deployment, change func(*appsv1.Deployment)) *appsv1.Deployment {
	t.Helper()
	d := live.DeepCopy()
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.ManagedFields = nil
	change(d)
	return d
}

func TestDetectConflicts(t *testing.T) {
	base := deploymentAC("img:1", "x", map[string]string{"A": "1"})
	imagePath := `.spec.template.spec.containers[name="model"].image`
	for name, tc := range map[string]struct {
		writes  func(t *testing.T) *appsv1.Deployment
		desired *appsv1ac.DeploymentApplyConfiguration
		want    []Conflict
	}{
		"nobody else wrote": {
			writes:  func(t *testing.T) *appsv1.Deployment { return replay(t, write{manager: op, obj: base}) },
			desired: deploymentAC("img:2", "x", map[string]string{"A": "1"}),
			want:    nil, // the operator's own change is no conflict
		},
		"a person's Update of the image": {
			writes: func(t *testing.T) *appsv1.Deployment {
				live := replay(t, write{manager: op, obj: base})
				return replay(t, write{manager: op, obj: base},
					write{manager: "person", update: true, obj: edit(t, live, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "img:evil" })})
			},
			desired: base,
			want:    []Conflict{{Path: imagePath, Managers: []string{"person (Update)"}}},
		},
		"a person's forced apply of the image and a label": {
			writes: func(t *testing.T) *appsv1.Deployment {
				return replay(t, write{manager: op, obj: base},
					write{manager: "person", force: true, obj: deploymentAC("img:evil", "y", nil)})
			},
			desired: base,
			want: []Conflict{
				{Path: ".spec.template.metadata.labels.team", Managers: []string{"person"}},
				{Path: imagePath, Managers: []string{"person"}},
			},
		},
		"a GitOps label the operator does not apply": {
			writes: func(t *testing.T) *appsv1.Deployment {
				gitops := appsv1ac.Deployment("web", "ns").WithLabels(map[string]string{"argocd.argoproj.io/instance": "app"})
				return replay(t, write{manager: op, obj: base}, write{manager: "argocd-controller", obj: gitops})
			},
			desired: deploymentAC("img:2", "x", map[string]string{"A": "1"}),
			want:    nil,
		},
		"another manager co-owns the same value": {
			writes: func(t *testing.T) *appsv1.Deployment {
				return replay(t, write{manager: op, obj: base}, write{manager: "argocd-controller", obj: base})
			},
			desired: deploymentAC("img:2", "x", map[string]string{"A": "1"}),
			want:    nil, // the operator still owns the image: changing it is its own business
		},
		"an env entry by key": {
			writes: func(t *testing.T) *appsv1.Deployment {
				live := replay(t, write{manager: op, obj: base})
				return replay(t, write{manager: op, obj: base},
					write{manager: "kubectl-edit", update: true, obj: edit(t, live, func(d *appsv1.Deployment) {
						d.Spec.Template.Spec.Containers[0].Env[0].Value = "2"
						d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "B", Value: "mine"})
					})})
			},
			desired: base,
			want:    []Conflict{{Path: `.spec.template.spec.containers[name="model"].env[name="A"].value`, Managers: []string{"kubectl-edit (Update)"}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			live := tc.writes(t)
			got, err := DetectConflicts(NewTypeConverter(scheme(t)), live, tc.desired, op)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s\nmanagedFields: %s", diff, managed(live))
			}
		})
	}
}

func managed(obj client.Object) string {
	var b strings.Builder
	for _, e := range obj.GetManagedFields() {
		fmt.Fprintf(&b, "\n  %s %s %s", e.Manager, e.Operation, e.FieldsV1.Raw)
	}
	return b.String()
}

// recorder keeps the Events it is given.
type recorder struct{ notes []string }

func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.notes = append(r.notes, eventtype+" "+reason+" "+fmt.Sprintf(note, args...))
}

func TestReportConflictsRecordsOneEvent(t *testing.T) {
	base := deploymentAC("img:1", "x", nil)
	live := replay(t, write{manager: op, obj: base}, write{manager: "person", force: true, obj: deploymentAC("img:evil", "y", nil)})
	rec := &recorder{}
	a := Applier{Client: fakeClient{scheme: scheme(t)}, FieldManager: op, Recorder: rec}
	a.reportConflicts(context.Background(), Change{Owner: live, Live: live, Desired: deploymentAC("img:1", "x", nil)})
	if len(rec.notes) != 1 {
		t.Fatalf("want one Event, got %q", rec.notes)
	}
	for _, want := range []string{"Warning OwnershipConflict", `containers[name="model"].image`, ".labels.team", "person"} {
		if !strings.Contains(rec.notes[0], want) {
			t.Errorf("Event %q does not name %q", rec.notes[0], want)
		}
	}
	// Nil recorder: nothing, no panic.
	Applier{Client: fakeClient{scheme: scheme(t)}, FieldManager: op}.reportConflicts(context.Background(), Change{Owner: live, Live: live, Desired: base})
}

// fakeClient is a client that only knows its scheme; reportConflicts needs nothing else.
type fakeClient struct {
	client.Client
	scheme *runtime.Scheme
}

func (f fakeClient) Scheme() *runtime.Scheme { return f.scheme }

func TestReportConflictsLogsADetectionError(t *testing.T) {
	live := replay(t, write{manager: op, obj: deploymentAC("img:1", "x", nil)})
	// A field the Deployment schema does not know: the detection cannot type the desired object.
	bogus := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec":     map[string]any{"bogus": true},
	}}
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	rec := &recorder{}
	a := Applier{Client: fakeClient{scheme: scheme(t)}, FieldManager: op, Recorder: rec}
	a.reportConflicts(logr.NewContext(context.Background(), logger), Change{Owner: live, Live: live, Desired: client.ApplyConfigurationFromUnstructured(bogus)})
	if len(rec.notes) != 0 {
		t.Fatalf("no Event without a detection: %q", rec.notes)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "detecting ownership conflicts") || !strings.Contains(lines[0], "ns/web") {
		t.Fatalf("the detection error must be logged, naming the object: %q", lines)
	}
}
