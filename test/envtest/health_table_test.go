/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// healthRow is one row of a table of docs/health.md: the kind and state it names, and its cells
// by column header.
type healthRow struct {
	kind, state string
	cells       map[string]string
}

// exactCell is a cell the table test checks as is: an absent condition or one Status/Reason.
var exactCell = regexp.MustCompile(`^(-|(True|False)/[A-Za-z]+)$`)

// healthTables reads every table of docs/health.md whose first header is "<Kind> state".
func healthTables() []healthRow {
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "docs", "health.md"))
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	split := func(line string) []string {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	var rows []healthRow
	var header []string
	var kind string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "|") {
			header, kind = nil, ""
			continue
		}
		cells := split(line)
		switch {
		case header == nil:
			k, ok := strings.CutSuffix(cells[0], " state")
			if !ok {
				header = []string{}
				continue
			}
			header, kind = cells, k
		case kind == "" || strings.HasPrefix(cells[0], "---"):
		default:
			row := healthRow{kind: kind, state: strings.TrimSpace(strings.Split(cells[0], " (")[0]), cells: map[string]string{}}
			for i, h := range header[1:] {
				row.cells[h] = cells[i+1]
			}
			rows = append(rows, row)
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	return rows
}

// objectName is the name of the object a state's scenario brings into it.
func objectName(kind, state string) string {
	n := strings.ReplaceAll(state, " ", "-")
	if kind == "ModelRouter" {
		return "r-" + n
	}
	return n
}

// someoneElsesDeployment is a Deployment of that name no operator controls.
func someoneElsesDeployment(ns, name string) {
	Expect(k8sClient.Create(suiteCtx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "theirs"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/theirs:1"}}}}},
	})).To(Succeed())
}

var _ = Describe("Health tables", func() {
	It("[K11, I49] every row of docs/health.md: its conditions, kstatus and the Argo CD check on the object the API server returns", func() {
		ns, restricted := newNamespace(), newNamespace()
		startOperator(ns, controllers.Config{})
		// The gate-failed row needs an operator that may not read EndpointSlices.
		startOperatorWith(operatorOptions{namespaces: []string{restricted}, restConfig: impersonating(restricted, without(generatedRole(), "endpointslices"))})
		router := func(name, isvc string) {
			newRouter(ns, name, func(r *inferencev1alpha1.ModelRouter) {
				r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("chat", isvc)}
			})
		}
		// One scenario per state: it returns the namespace of the object it brings there.
		scenarios := map[string]func(name string) string{
			"InferenceService/creating": func(n string) string { newISVC(ns, n, nil); return ns },
			"InferenceService/rolling": func(n string) string {
				newISVC(ns, n, nil)
				eventuallyDeployment(ns, n, func(Gomega, *appsv1.Deployment) {})
				rolledTo(ns, n, 0, 1) // the old pod serves, none runs the new template yet
				return ns
			},
			"InferenceService/deferred": func(n string) string {
				gated(ns, n, inferencev1alpha1.RolloutPolicy{}, nil)
				rolledTo(ns, n, 1, 1)
				endpointSlice(ns, n, newRuntimePod("llamacpp:requests_processing", 2).port())
				removeTier(ns, n)
				return ns
			},
			"InferenceService/gate failed": func(n string) string {
				gated(restricted, n, inferencev1alpha1.RolloutPolicy{}, nil)
				rolledTo(restricted, n, 1, 1)
				removeTier(restricted, n)
				return restricted
			},
			"InferenceService/blocked": func(n string) string {
				refISVC(ns, n, "missing", inferencev1alpha1.RuntimeVLLM, nil)
				return ns
			},
			"InferenceService/refused": func(n string) string { someoneElsesDeployment(ns, n); newISVC(ns, n, nil); return ns },
			"InferenceService/stuck": func(n string) string {
				newISVC(ns, n, nil)
				eventuallyDeployment(ns, n, func(Gomega, *appsv1.Deployment) {})
				deploymentStatus(ns, n, func(d *appsv1.Deployment) {
					d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, Conditions: []appsv1.DeploymentCondition{{
						Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}
				})
				return ns
			},
			"InferenceService/serving": func(n string) string {
				newISVC(ns, n, nil)
				eventuallyDeployment(ns, n, func(Gomega, *appsv1.Deployment) {})
				rolledTo(ns, n, 1, 1)
				return ns
			},
			"ModelRouter/creating": func(n string) string { router(n, "serving"); return ns },
			"ModelRouter/no backend resolved": func(n string) string {
				router(n, "nowhere")
				eventuallyDeployment(ns, n+"-router-proxy", func(Gomega, *appsv1.Deployment) {})
				rolledTo(ns, n+"-router-proxy", 1, 1)
				return ns
			},
			"ModelRouter/refused": func(n string) string {
				Expect(k8sClient.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n + "-router-proxy"}})).To(Succeed())
				router(n, "serving")
				return ns
			},
			"ModelRouter/serving": func(n string) string {
				router(n, "serving")
				eventuallyDeployment(ns, n+"-router-proxy", func(Gomega, *appsv1.Deployment) {})
				rolledTo(ns, n+"-router-proxy", 1, 1)
				return ns
			},
			"Model/not in use": func(n string) string { newModel(ns, n, nil); return ns },
			"Model/loading": func(n string) string {
				newModel(ns, n, nil)
				refISVC(ns, n+"-user", n, inferencev1alpha1.RuntimeVLLM, nil)
				return ns
			},
			"Model/users stalled": func(n string) string {
				newModel(ns, n, nil)
				someoneElsesDeployment(ns, n+"-user")
				refISVC(ns, n+"-user", n, inferencev1alpha1.RuntimeVLLM, nil)
				return ns
			},
			"Model/loaded": func(n string) string {
				newModel(ns, n, nil)
				refISVC(ns, n+"-user", n, inferencev1alpha1.RuntimeVLLM, nil)
				eventuallyDeployment(ns, n+"-user", func(Gomega, *appsv1.Deployment) {})
				rolledTo(ns, n+"-user", 1, 1)
				return ns
			},
		}

		rows := healthTables()
		kinds := map[string]int{}
		for _, r := range rows {
			kinds[r.kind]++
		}
		Expect(kinds).To(Equal(map[string]int{"InferenceService": 8, "ModelRouter": 4, "Model": 4}), "the three tables of docs/health.md")
		where := map[string]string{}
		for _, r := range rows {
			scenario, ok := scenarios[r.kind+"/"+r.state]
			Expect(ok).To(BeTrue(), "docs/health.md has the %s row %q, which no scenario here produces", r.kind, r.state)
			where[r.kind+"/"+r.state] = scenario(objectName(r.kind, r.state))
		}
		Expect(where).To(HaveLen(len(scenarios)), "a scenario whose row docs/health.md no longer has")

		for _, r := range rows {
			By(r.kind + " " + r.state)
			ns, name := where[r.kind+"/"+r.state], objectName(r.kind, r.state)
			Eventually(func(g Gomega) {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion(inferencev1alpha1.GroupVersion.String())
				u.SetKind(r.kind)
				g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, u)).To(Succeed())
				conds := map[string]string{}
				list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range list {
					m := c.(map[string]any)
					conds[m["type"].(string)] = m["status"].(string) + "/" + m["reason"].(string)
				}
				for col, want := range r.cells {
					switch {
					case col == "kstatus":
						res, err := kstatus.Compute(u)
						g.Expect(err).NotTo(HaveOccurred())
						g.Expect(string(res.Status)).To(Equal(want), "kstatus: %s", res.Message)
					case col == "Argo CD":
						status, msg := argoHealth(r.kind, ns, name)
						g.Expect(status).To(Equal(want), "the Argo CD check (docs/argocd/health.lua): %s", msg)
					case col == "phase":
						if !strings.Contains(want, " ") {
							phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
							g.Expect(phase).To(Equal(want), "phase")
						}
					case col == "observedGeneration":
						og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
						g.Expect(og == u.GetGeneration()).To(Equal(want == "current"), "observedGeneration %d at generation %d", og, u.GetGeneration())
					case exactCell.MatchString(want) && want == "-":
						g.Expect(conds).NotTo(HaveKey(col), "%s should be absent", col)
					case exactCell.MatchString(want):
						g.Expect(conds).To(HaveKeyWithValue(col, want), "condition %s", col)
					}
				}
			}).WithTimeout(30*time.Second).Should(Succeed(), "docs/health.md's %s row %q", r.kind, r.state)
		}
	})
})
