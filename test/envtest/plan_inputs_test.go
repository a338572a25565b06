/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
)

// This file is the drift test's proof that its comparison is sensitive to every input of a plan:
// it builds the plan as kubectl llmkube does (the kind's Observe through an API client, then PlanFor
// with the operator's flags), leaves one input out, and shows that the comparison the plugin makes
// (plan.Object.WouldApply on each object, and the set of objects planned) then reports a
// difference on a converged cluster. So a plugin that forgot any one input could not pass the
// drift test.

// isvcDrop leaves one input out of an InferenceService's plan.
type isvcDrop func(*inferenceservice.Observed, *inferenceservice.Flags)

// routerDrop leaves one input out of a ModelRouter's plan.
type routerDrop func(*modelrouter.Observed, *modelrouter.Flags)

// planned is a plan's objects, by kind/name, with the field manager its comparison uses.
type planned struct {
	objects map[string]plan.Object
	manager string
}

// isvcPlan is the plan of isvc/name with the operator's flags (the drift spec's), after drop.
func isvcPlan(ns, name string, drop isvcDrop) (planned, error) {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, isvc)).To(Succeed())
	obs, err := inferenceservice.Observe(suiteCtx, k8sClient, isvc)
	Expect(err).NotTo(HaveOccurred())
	f := inferenceservice.Flags{FieldManager: ownership.DefaultFieldManager, EmitScrapeAnnotations: true}
	if drop != nil {
		drop(obs, &f)
	}
	p, err := inferenceservice.PlanFor(obs, f)
	if err != nil {
		return planned{}, err
	}
	objs := append([]plan.Object(nil), p.Before...)
	if p.HasDeployment() {
		d, err := p.DeploymentObject(obs.Deployment, f.FieldManager)
		if err != nil {
			return planned{}, err
		}
		objs = append(objs, d)
	}
	objs = append(append(objs, p.After...), p.Gateway...)
	return byKey(objs, f.FieldManager), nil
}

// routerPlan is the plan of mr/name with the operator's flags (the drift spec's), after drop.
func routerPlan(ns, name, image string, drop routerDrop) (planned, error) {
	router := &inferencev1alpha1.ModelRouter{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, router)).To(Succeed())
	obs, err := modelrouter.Observe(suiteCtx, k8sClient, router)
	Expect(err).NotTo(HaveOccurred())
	f := modelrouter.Flags{EmitScrapeAnnotations: true, Image: image}
	if drop != nil {
		drop(obs, &f)
	}
	p, err := modelrouter.PlanFor(obs, f)
	if err != nil {
		return planned{}, err
	}
	objs := append(append([]plan.Object(nil), p.Access...), p.ConfigMap,
		plan.Of(p.Deployment(), func() *appsv1.Deployment { return &appsv1.Deployment{} }, appsv1ac.ExtractDeployment), p.Service)
	return byKey(objs, ownership.DefaultFieldManager), nil
}

func byKey(objs []plan.Object, manager string) planned {
	out := planned{objects: map[string]plan.Object{}, manager: manager}
	for _, o := range objs {
		out.objects[o.Kind+"/"+o.Key.Name] = o
	}
	return out
}

// differences is what the plugin's comparison reports for p against the cluster: each object it
// would apply, and each object of want (the keys of the full plan) it does not plan at all, or
// plans beyond it.
func differences(p planned, want []string) []string {
	var out []string
	for k, o := range p.objects {
		live, err := o.Live(suiteCtx, k8sClient)
		Expect(err).NotTo(HaveOccurred())
		apply, err := o.WouldApply(live, p.manager)
		Expect(err).NotTo(HaveOccurred())
		if apply {
			out = append(out, k+" would be applied")
		}
	}
	have := map[string]bool{}
	for k := range p.objects {
		have[k] = true
	}
	for _, k := range want {
		if !have[k] {
			out = append(out, k+" is not planned")
		}
		delete(have, k)
	}
	for k := range have {
		out = append(out, k+" is planned beyond what was applied")
	}
	sort.Strings(out)
	return out
}

func keysOf(p planned) []string {
	var out []string
	for k := range p.objects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inputCase leaves one input out of the plan of one target.
type inputCase struct {
	input, target string
	isvc          isvcDrop
	router        routerDrop
}

// expectEveryInputMatters asserts, on a converged cluster, that the full plan of each case's
// target shows nothing to do and that the plan with the case's input left out shows something
// (or cannot be made): the drift test's comparison notices each input.
func expectEveryInputMatters(ns, image string, cases []inputCase) {
	for _, c := range cases {
		kind, name := c.target[:2], c.target[3:]
		if kind == "is" {
			name = c.target[5:]
		}
		build := func(withDrop bool) (planned, error) {
			if kind == "mr" {
				var d routerDrop
				if withDrop {
					d = c.router
				}
				return routerPlan(ns, name, image, d)
			}
			var d isvcDrop
			if withDrop {
				d = c.isvc
			}
			return isvcPlan(ns, name, d)
		}
		full, err := build(false)
		Expect(err).NotTo(HaveOccurred(), c.target)
		want := keysOf(full)
		Expect(differences(full, want)).To(BeEmpty(), "%s: the full plan of a converged operator shows a change", c.target)
		dropped, err := build(true)
		if err != nil {
			// A plan that cannot be made is an error (exit 2), not "nothing to do".
			GinkgoWriter.Printf("%s without %s: no plan: %v\n", c.target, c.input, err)
			continue
		}
		diffs := differences(dropped, want)
		GinkgoWriter.Printf("%s without %s: %v\n", c.target, c.input, diffs)
		Expect(diffs).NotTo(BeEmpty(),
			fmt.Sprintf("%s with %s left out of the plugin's side: the comparison reports nothing, so the drift test could not notice a plugin that forgot it", c.target, c.input))
	}
}
