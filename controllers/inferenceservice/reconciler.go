/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package inferenceservice reconciles an InferenceService into a Deployment, a Service and,
// with autoscaling, a HorizontalPodAutoscaler, all by server-side apply under one field manager.
package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/converge"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/controllers/retry"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/controllers/status"
)

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices/status,verbs=get;patch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler turns an InferenceService into its workload.
type Reconciler struct {
	Client   client.Client
	Applier  ownership.Applier
	Recorder events.EventRecorder
	// Gate holds pod-template changes back until the runtime is idle (rolloutPolicy.waitForIdle).
	Gate *rollout.Gate
	// EmitScrapeAnnotations adds prometheus.io/* hints to the pod template.
	EmitScrapeAnnotations bool
	// CRDRecheck is how often a missing Gateway API CRD is looked for again while an
	// InferenceService asks for a gateway; DefaultCRDRecheck when zero.
	CRDRecheck time.Duration

	// gateway tracks the optional InferencePool and HTTPRoute kinds (gateway.go).
	gateway *gatewayKinds

	// statusWrites deduplicates status writes while the cache lags behind the last one.
	statusWrites status.Writes
	// DriftRepair is how often a converged object is reconciled again (retry.Refused.Resync).
	DriftRepair time.Duration

	// refused is the backoff of writes the API server refused.
	refused *retry.Refused
	// deletions are the generations whose owed deletions were decided against the API server.
	deletions decidedDeletions
	// absent are the objects the API server said do not exist, per generation.
	absent absences
}

// SetupWithManager watches InferenceServices, the objects they own, and the Models they name.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	r.refused = retry.NewRefused()
	r.refused.Resync = r.DriftRepair
	b, err := watchModels(mgr, ctrl.NewControllerManagedBy(mgr).
		For(&inferencev1alpha1.InferenceService{}, builder.WithPredicates(status.SpecOrMetadataChanged)).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&corev1.Service{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}, builder.WithPredicates(r.Applier.Written.Predicate())))
	if err != nil {
		return err
	}
	c, err := b.
		WithOptions(opts).
		Named("inferenceservice").
		Build(r)
	if err != nil {
		return err
	}
	r.setupGateway(mgr, c)
	return nil
}

// Reconcile is the shared skeleton (converge.Loop) with the InferenceService's own steps (kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	l := converge.Loop[*inferencev1alpha1.InferenceService, planned, applied]{
		Kind: kind{r}, Name: "InferenceService", New: func() *inferencev1alpha1.InferenceService { return &inferencev1alpha1.InferenceService{} },
		Client: r.Client, Applier: r.Applier, Recorder: r.Recorder, Refused: r.refused, Writes: &r.statusWrites,
	}
	return l.Reconcile(ctx, req)
}

// planned is the plan of one InferenceService with what it was made from.
type planned struct {
	obs  *Observed
	plan *Plan
	// absent says which absences Observe remembered rather than read.
	absent *absentReader
}

// applied is what the apply leaves for the status and the requeue.
type applied struct {
	// live is the Deployment as the API server last answered (nil: none).
	live *appsv1.Deployment
	// before is the Deployment as read before this reconcile's apply (nil: none), what a scale
	// is reported from.
	before *appsv1.Deployment
	// deferred is the rollout gate's decision when it held the pod template back.
	deferred *rollout.Decision
	gateway  gatewayOutcome
}

// kind is the InferenceService's part of the loop.
type kind struct{ r *Reconciler }

func (k kind) Plan(ctx context.Context, _ client.Reader, isvc *inferencev1alpha1.InferenceService) (planned, error) {
	// Not the loop's reader, which reads past the cache on every miss: once per generation here.
	ar := k.r.absent.reader(k.r.Client, k.r.Applier.Past(), isvc)
	obs, err := Observe(ctx, ar, isvc)
	if err != nil {
		return planned{}, err
	}
	// Note: which Gateway API kinds are served is asked in the gateway step (reconcileGateway),
	// after the workload is applied, as that lookup also starts the watches of those kinds.
	p, err := PlanFor(obs, Flags{FieldManager: k.r.Applier.FieldManager, EmitScrapeAnnotations: k.r.EmitScrapeAnnotations})
	return planned{obs: obs, plan: p, absent: ar}, err
}

func (k kind) Apply(ctx context.Context, isvc *inferencev1alpha1.InferenceService, pl planned) (applied, []error) {
	r, p := k.r, pl.plan
	out := applied{live: pl.obs.Deployment, before: pl.obs.Deployment}
	// Each object converges on its own, and the runner holds what needs an object that was not
	// applied (the Deployment without its claim, the Service, HPA and pool without the Deployment,
	// the route without the pool), withdrawing what the InferenceService controls of it after a
	// refusal.
	run := &plan.Runner{Applier: r.Applier, Reader: r.Client, Owner: isvc, Withdraw: func(ctx context.Context, o plan.Object) error {
		if o.Kind == "Deployment" {
			out.live, out.before = nil, nil // no status is read from a workload that is withdrawn
		}
		return o.DeleteControlled(ctx, r.Client, r.Applier.Uncached(r.Client), isvc)
	}}
	for _, o := range p.Before {
		run.Do(ctx, plan.Step{Object: o, Send: func(ctx context.Context) error { return r.syncObject(ctx, isvc, o) }})
	}
	r.reportKeptSize(isvc, client.ObjectKey{Namespace: isvc.Namespace, Name: CacheClaimName(isvc)}, p.KeptSize)
	r.reportOverridden(isvc, p.Overridden)
	// Failures of the rollout gate: the template waits, the rest of the Deployment was applied,
	// so they hold nothing that needs it.
	var gateFailures []error
	workload := plan.Step{Object: plan.Named("Deployment", client.ObjectKeyFromObject(isvc), newDeployment).Needing(p.deploymentNeeds()...)}
	switch {
	case p.Refused != nil:
		// Not the operator's workload: nothing is applied for it and its status is not read.
		out.live, out.before = nil, nil
		workload.Refused = p.Refused
		run.Do(ctx, workload)
	case p.HasDeployment():
		// A blocked plan (its Model is missing) has no Deployment: an existing one stays as is.
		workload.Send = func(ctx context.Context) error {
			before, err := r.beforeCreate(ctx, isvc, pl)
			if err != nil {
				return err
			}
			live, d, fs := r.reconcileDeployment(ctx, isvc, before, p)
			out.deferred = d
			if live != nil {
				out.live = live
			}
			var blocking []error
			for _, f := range fs {
				if s := (*ownership.Failure)(nil); errors.As(f, &s) && s.Step == ownership.StepGate {
					gateFailures = append(gateFailures, f)
				} else {
					blocking = append(blocking, f)
				}
			}
			if len(blocking) == 1 {
				return blocking[0]
			}
			return errors.Join(blocking...)
		}
		run.Do(ctx, workload)
	}
	for _, o := range p.After {
		run.Do(ctx, plan.Step{Object: o, Send: func(ctx context.Context) error { return r.syncObject(ctx, isvc, o) }})
	}
	deleteFailures := r.deleteOwed(ctx, isvc, p.Delete)
	gateway, err := r.reconcileGateway(ctx, isvc, p, run)
	failures := append(append(run.Failures, gateFailures...), deleteFailures...)
	if err != nil {
		failures = append(failures, err)
	}
	out.gateway = gateway
	r.reportUnreadable(isvc, out.deferred)
	return out, failures
}

func (k kind) Status(isvc *inferencev1alpha1.InferenceService, pl planned, a applied, failures []error) runtime.ApplyConfiguration {
	return StatusFor(pl.plan, a.live, failures, a.deferred, a.gateway.condition)
}

func (kind) OwnedStatus(isvc *inferencev1alpha1.InferenceService, manager string) (any, error) {
	return acv1alpha1.ExtractInferenceServiceStatus(isvc, manager)
}

func (kind) Conditions(isvc *inferencev1alpha1.InferenceService) []metav1.Condition {
	return isvc.Status.Conditions
}

func (k kind) StatusWritten(isvc *inferencev1alpha1.InferenceService, a applied) {
	k.r.reportTransitions(isvc, a.before, a.live)
}

func (kind) RequeueAfter(a applied) time.Duration {
	d := a.gateway.requeueAfter
	if a.deferred != nil && a.deferred.RequeueAfter > 0 && (d == 0 || a.deferred.RequeueAfter < d) {
		d = a.deferred.RequeueAfter
	}
	return d
}

// beforeCreate is the live Deployment the plan was made with; when the plan saw none because an
// earlier reconcile's read of the API server was remembered, it reads again, so that a create is
// always decided on a fresh read (ownership.Applier.Get).
func (r *Reconciler) beforeCreate(ctx context.Context, isvc *inferencev1alpha1.InferenceService, pl planned) (*appsv1.Deployment, error) {
	key := client.ObjectKeyFromObject(isvc)
	if pl.obs.Deployment != nil || !pl.absent.fromMemory(&appsv1.Deployment{}, key) {
		return pl.obs.Deployment, nil
	}
	d := &appsv1.Deployment{}
	switch found, err := r.Applier.Get(ctx, r.Client, key, d); {
	case err != nil:
		return nil, ownership.Fail("Deployment", key, ownership.StepRead, err)
	case found:
		return d, nil
	}
	return nil, nil
}

// syncObject applies one object of the plan. A model-cache claim field that cannot change (its
// storage class, a smaller size) is refused by the API server; the error then says what to do,
// and becomes the Degraded condition without a retry loop.
func (r *Reconciler) syncObject(ctx context.Context, isvc *inferencev1alpha1.InferenceService, o plan.Object) error {
	err := o.Sync(ctx, r.Applier, r.Client, isvc)
	if o.Kind == "PersistentVolumeClaim" && apierrors.IsInvalid(err) {
		return fmt.Errorf("model cache claim %s: %w (a claim's storage class cannot change, and its size can only grow on a bound claim whose storage class allows expansion: put spec.modelCache back as it was, or delete the claim so that the operator makes a new one and the model is downloaded again)", o.Key.Name, err)
	}
	return err
}

var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// replicasFor decides what the apply says about spec.replicas, and whether the apply must be guarded
// by live's resourceVersion.
//
// Note: with autoscaling, the operator keeps the live value until another manager (the HPA, or
// a person through the scale subresource) owns the field, and then leaves it out. Dropping it
// while the operator is its only owner would delete it and the Deployment would fall back to one
// replica: this is the handover the server-side apply documentation describes for autoscalers.
// The live value comes from the cache, which may lag behind an HPA's newer write: so the apply
// that carries it is guarded by the resourceVersion it was read at, and a stale read fails with a
// conflict (and is retried on a fresh read) instead of forcing an old replica count back.
func replicasFor(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, fieldManager string) (*int32, bool, error) {
	if isvc.Spec.Suspend {
		// Suspended: no pod, whoever else scales it (the plan deletes the autoscaler meanwhile).
		return ptr.To[int32](0), false, nil
	}
	as := isvc.Spec.Autoscaling
	if as == nil {
		return ptr.To(ptr.Deref(isvc.Spec.Replicas, 1)), false, nil
	}
	if live == nil {
		return ptr.To(ptr.Deref(as.MinReplicas, 1)), false, nil
	}
	others, err := ownership.OtherOwners(live, fieldManager, replicasPath)
	if err != nil || len(others) > 0 {
		return nil, false, err
	}
	return ptr.To(ptr.Deref(live.Spec.Replicas, ptr.Deref(as.MinReplicas, 1))), true, nil
}

// reconcileDeployment applies the plan's Deployment when the owned fields differ, and then returns
// it as the API server answered, so that the status of this reconcile describes the Deployment as
// it is now, not as the cache had it before the write. It also returns the gate's decision when it
// held the pod template back, and what failed.
//
// Note: a failure of the rollout gate (reading EndpointSlices, say) holds the pod template back as
// a deferral would, and everything else of the Deployment is still applied.
func (r *Reconciler) reconcileDeployment(ctx context.Context, isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, p *Plan) (*appsv1.Deployment, *rollout.Decision, []error) {
	key := client.ObjectKeyFromObject(isvc)
	fail := func(step ownership.Step, err error) []error {
		return []error{ownership.Fail("Deployment", key, step, err)}
	}
	if live != nil && r.Applier.Migrator.Legacy.NeedsMigration(live, r.Applier.FieldManager) {
		target, err := p.MigrationTarget(live)
		if err != nil {
			return nil, nil, fail(ownership.StepBuild, err)
		}
		if live, err = ownership.MigrateIfNeeded(ctx, r.Applier.Migrator, isvc, "InferenceService", live, target); err != nil {
			return nil, nil, []error{err}
		}
	}
	desired, err := p.Deployment(live, r.Applier.FieldManager)
	if err != nil {
		return nil, nil, fail(ownership.StepBuild, err)
	}
	var owned any
	var deferred *rollout.Decision
	var failures []error
	if live != nil {
		extracted, err := appsv1ac.ExtractDeployment(live, r.Applier.FieldManager)
		if err != nil {
			return nil, nil, fail(ownership.StepExtract, err)
		}
		if deferred, err = r.gate(ctx, isvc, desired, extracted); err != nil {
			desired.Spec.Template = extracted.Spec.Template
			failures = append(failures, ownership.Fail("Deployment", key, ownership.StepGate, err))
		}
		owned = extracted
	}
	sent, err := r.Applier.ApplyIfChanged(ctx, ownership.Change{Owner: isvc, Live: liveObject(live), Owned: owned, Desired: desired})
	if err != nil {
		return nil, deferred, append(failures, ownership.Fail("Deployment", key, ownership.StepApply, err))
	}
	if !sent {
		return live, deferred, failures
	}
	log.FromContext(ctx).V(1).Info("applied", "kind", "Deployment")
	if applied, ok := ownership.Answer(desired, &appsv1.Deployment{}); ok {
		return applied, deferred, failures
	}
	return live, deferred, failures // the status then uses what was read; the next event corrects it
}

// migrationTarget is what the migration of live takes over: the desired Deployment with startup
// protection kept, and do-not-disrupt whenever live carries it.
//
// Note: the legacy operator set karpenter.sh/do-not-disrupt through its Update entry; on a Ready
// Deployment the desired template no longer has it, so without this nobody would own it after
// the migration and server-side apply would never prune it (protectStartup silently turned into
// protectAlways). Owned, it leaves by keepStartupProtection's rule: with the next roll that
// happens for another reason, or at once when the spec asks for no startup protection.
func migrationTarget(isvc *inferencev1alpha1.InferenceService, in Inputs, live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
	in.KeepStartupProtection = true
	target, err := Deployment(isvc, in)
	if err != nil {
		return nil, err
	}
	if v, ok := live.Spec.Template.Annotations[AnnotationDoNotDisrupt]; ok {
		if _, set := target.Spec.Template.Annotations[AnnotationDoNotDisrupt]; !set {
			target.Spec.Template.WithAnnotations(map[string]string{AnnotationDoNotDisrupt: v})
		}
	}
	return target, nil
}

// gate holds a pod-template change back while the rollout gate says so: desired then carries the
// template the operator owns now, with everything else new, so the rest converges and nothing is
// half-applied. It returns the decision when it held the template back.
//
// Note: "would roll" is the owned template against the desired one, never a hash annotation, so
// a pure removal of a key is gated, and another tool's change (restartedAt) is not.
func (r *Reconciler) gate(ctx context.Context, isvc *inferencev1alpha1.InferenceService, desired, owned *appsv1ac.DeploymentApplyConfiguration) (*rollout.Decision, error) {
	if !rollout.Enabled(isvc) || r.Gate == nil || owned.Spec == nil || owned.Spec.Template == nil {
		return nil, nil
	}
	same, err := ownership.OwnedEqualsDesired(owned.Spec.Template, desired.Spec.Template)
	if err != nil || same {
		return nil, err
	}
	var since *time.Time
	if c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred); c != nil && c.Status == metav1.ConditionTrue {
		since = &c.LastTransitionTime.Time
	}
	d, err := r.Gate.Decide(ctx, isvc, isvc.Name, PortName, since)
	if err != nil || d.Roll {
		return nil, err
	}
	desired.Spec.Template = owned.Spec.Template
	return &d, nil
}

// ReasonMetricsUnreadable is the Warning Event that names the pods the rollout gate could not read.
const ReasonMetricsUnreadable = "MetricsUnreadable"

// reportUnreadable sends a Warning Event naming the pods whose metrics the rollout gate could not
// read, so that a deferral on a pod that will never answer is seen in `kubectl describe` and
// `kubectl events`, not only in the condition.
//
// Note: only news is sent, a deferral whose message differs from the RolloutDeferred condition
// already written; the gate asks again every few seconds, and the same answer stays silent.
func (r *Reconciler) reportUnreadable(isvc *inferencev1alpha1.InferenceService, d *rollout.Decision) {
	if r.Recorder == nil || d == nil || len(d.Unreadable) == 0 {
		return
	}
	if c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred); c != nil && c.Status == metav1.ConditionTrue && c.Message == d.Message {
		return
	}
	r.Recorder.Eventf(isvc, nil, corev1.EventTypeWarning, ReasonMetricsUnreadable, "RolloutGate",
		"the pod-template change waits: metrics unreadable, counted busy: %s", strings.Join(d.Unreadable, ", "))
}

// keepStartupProtection keeps do-not-disrupt from being the pod template's only change, either
// way: a template that has it keeps it when dropping it (its pods became Ready) would be the only
// change, and a template without it does not gain it when adding it (no pod is Ready: scaled to
// zero, or every pod restarting) would be. Pods are never rolled for the hint alone; it comes and
// goes with a roll that happens for another reason.
//
// Note: so a scale-up from zero starts its pods from the template as it is, without the hint when
// the template had lost it; adding it then would roll the very pods it is meant to protect.
func keepStartupProtection(isvc *inferencev1alpha1.InferenceService, in Inputs, desired, owned *appsv1ac.DeploymentApplyConfiguration) (*appsv1ac.DeploymentApplyConfiguration, error) {
	if !StartupProtected(isvc) || owned.Spec == nil || owned.Spec.Template == nil {
		return desired, nil
	}
	has := owned.Spec.Template.Annotations[AnnotationDoNotDisrupt] == "true"
	if has == (desired.Spec.Template.Annotations[AnnotationDoNotDisrupt] == "true") {
		return desired, nil
	}
	if has {
		in.KeepStartupProtection = true
	} else {
		in.Ready = true
	}
	other, err := Deployment(isvc, in)
	if err != nil {
		return nil, err
	}
	same, err := ownership.OwnedEqualsDesired(owned.Spec.Template, other.Spec.Template)
	if err != nil || !same {
		return desired, err
	}
	return other, nil
}

// liveObject keeps a nil Deployment a nil interface.
func liveObject(d *appsv1.Deployment) client.Object {
	if d == nil {
		return nil
	}
	return d
}
