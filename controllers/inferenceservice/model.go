/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/status"
)

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=models,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;patch;delete

// ModelRefIndex is the field index of InferenceServices by spec.modelRef, so a Model's change
// finds every InferenceService that names it without listing them all.
const ModelRefIndex = "spec.modelRef"

// Reasons of the ModelResolved condition.
const (
	ReasonModelResolved = "Resolved"
	ReasonModelNotFound = "ModelNotFound"
)

// IndexModelRef indexes InferenceServices by spec.modelRef. controllers.Setup registers it once:
// the InferenceService reconciler uses it to find the InferenceServices of a changed Model, the
// Model reconciler to count and name them.
func IndexModelRef(ctx context.Context, idx client.FieldIndexer) error {
	return idx.IndexField(ctx, &inferencev1alpha1.InferenceService{}, ModelRefIndex, func(o client.Object) []string {
		if ref := o.(*inferencev1alpha1.InferenceService).Spec.ModelRef; ref != "" {
			return []string{ref}
		}
		return nil
	})
}

// watchModels makes a Model's spec change (or its creation or deletion) reconcile every
// InferenceService that names it, found through IndexModelRef. Status writes of the Model do not
// move its generation and so reconcile nothing.
func watchModels(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	c := mgr.GetClient()
	return b.Watches(&inferencev1alpha1.Model{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &inferencev1alpha1.InferenceServiceList{}
		if err := c.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{ModelRefIndex: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the InferenceServices of a Model", "model", o.GetName())
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}), builder.WithPredicates(predicate.GenerationChangedPredicate{})), nil
}

// modelResolved is the ModelResolved condition for isvc, keeping its lastTransitionTime while its
// status stays; nil for an inline spec.model, which has nothing to resolve.
func modelResolved(isvc *inferencev1alpha1.InferenceService, missing bool) *metav1ac.ConditionApplyConfiguration {
	if isvc.Spec.ModelRef == "" {
		return nil
	}
	c := metav1.Condition{Type: inferencev1alpha1.ConditionModelResolved, Status: metav1.ConditionTrue, Reason: ReasonModelResolved,
		Message: fmt.Sprintf("Model %s exists", isvc.Spec.ModelRef), ObservedGeneration: isvc.Generation}
	if missing {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonModelNotFound
		c.Message = fmt.Sprintf("Model %s does not exist in namespace %s: create it; until then no Deployment is created and an existing one is left as it is", isvc.Spec.ModelRef, isvc.Namespace)
	}
	conds := append([]metav1.Condition(nil), isvc.Status.Conditions...)
	meta.SetStatusCondition(&conds, c)
	return status.ConditionsToApply(conds, func(t string) bool { return t == c.Type })[0]
}

// keepLargerSize keeps the size live (a Model's cache claim) has when desired asks for less, and
// returns the size kept; nil when desired asks for at least as much. Every InferenceService of the
// Model applies the claim, each with its own spec.modelCache.size, and the claim takes the largest
// ever asked: without it two sizes would make the request flip on every reconcile (a resize each
// time on a real CSI driver), or the smaller one would be refused by the API server as a shrink.
func keepLargerSize(desired *corev1ac.PersistentVolumeClaimApplyConfiguration, live *corev1.PersistentVolumeClaim) *resource.Quantity {
	if live == nil || desired.Spec == nil || desired.Spec.Resources == nil || desired.Spec.Resources.Requests == nil {
		return nil
	}
	have, ok := live.Spec.Resources.Requests[corev1.ResourceStorage]
	want := (*desired.Spec.Resources.Requests)[corev1.ResourceStorage]
	if !ok || have.Cmp(want) <= 0 {
		return nil
	}
	desired.Spec.Resources.WithRequests(corev1.ResourceList{corev1.ResourceStorage: have})
	return &have
}

// keptSizes remembers the size disagreements already reported, by InferenceService UID and size,
// so each is reported once per process, not on every reconcile.
var keptSizes sync.Map

// reportKeptSize records a Normal Event on isvc, once, when its Model's claim keeps a larger size
// than isvc asks for.
func (r *Reconciler) reportKeptSize(isvc *inferencev1alpha1.InferenceService, key client.ObjectKey, kept *resource.Quantity) {
	if kept == nil || r.Recorder == nil {
		return
	}
	if _, seen := keptSizes.LoadOrStore(string(isvc.UID)+"/"+kept.String(), true); seen {
		return
	}
	r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, "CacheSizeKept", "ApplyCacheClaim",
		"PersistentVolumeClaim %s keeps %s: an InferenceService of Model %s asked for more than this one's spec.modelCache.size, and a Model's claim never shrinks", key, kept, isvc.Spec.ModelRef)
}
