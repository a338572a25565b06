/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	// The plugin's reading of managedFields (Owner, Index) lives in its owners package.
	managed "github.com/llmkube/operator/internal/plugin/owners"
)

var (
	pluginOnce sync.Once
	pluginDir  string
)

// pluginPath builds kubectl-llmkube once into a directory of its own, which the real kubectl then
// finds on PATH as the plugin `llmkube`.
func pluginPath() string {
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llmkube-plugin-")
		Expect(err).NotTo(HaveOccurred())
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-llmkube"), "github.com/llmkube/operator/cmd/kubectl-llmkube")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		pluginDir = dir
	})
	return pluginDir
}

// llmkube runs `kubectl llmkube args...` as a cluster admin, the plugin found on PATH by the real
// kubectl, and returns stdout, stderr and the exit code.
func llmkube(args ...string) (string, string, int) {
	return llmkubeAs(adminKubeconfig(), args...)
}

// llmkubeAs is llmkube with another kubeconfig.
func llmkubeAs(kubeconfig string, args ...string) (string, string, int) {
	cmd := exec.Command(kubectlBinary(), append(append([]string{"llmkube"}, args...), "--kubeconfig", kubeconfig)...)
	cmd.Env = append(os.Environ(), "PATH="+pluginPath()+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	GinkgoWriter.Printf("kubectl llmkube %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	return stdout.String(), stderr.String(), code
}

// llmkubeJSON runs the plugin with -o json, expects success, and decodes the answer into out. It
// runs it twice: the output must be byte for byte the same (stable for scripts and diffs).
func llmkubeJSON(out any, args ...string) {
	args = append(args, "-o", "json")
	first, stderr, code := llmkube(args...)
	if args[0] == "diff" {
		Expect(code).To(BeNumerically("<", 2), stderr) // 1: something would change
	} else {
		Expect(code).To(Equal(0), stderr)
	}
	second, _, _ := llmkube(args...)
	Expect(second).To(Equal(first), "-o json is not stable")
	Expect(json.Unmarshal([]byte(first), out)).To(Succeed())
}

type ownersRow struct {
	Part   string          `json:"part"`
	Key    string          `json:"key"`
	Value  string          `json:"value"`
	Want   *string         `json:"want"`
	Source string          `json:"source"`
	Owners []managed.Owner `json:"owners"`
	Flags  []string        `json:"flags"`
}

func rowOf(rows []ownersRow, part, key string) ownersRow {
	for _, r := range rows {
		if r.Part == part && r.Key == key {
			return r
		}
	}
	Fail("no row " + part + " " + key)
	return ownersRow{}
}

var operatorApply = managed.Owner{Manager: ownership.DefaultFieldManager, Operation: "Apply"}

// planKey, planOutcome and planDoc are what the tests read of `migration plan -o json`.
type planKey struct {
	Part   string          `json:"part"`
	Key    string          `json:"key"`
	After  *string         `json:"after"`
	Action string          `json:"action"`
	Owners []managed.Owner `json:"owners"`
}

type planOutcome struct {
	Keys      []planKey `json:"keys"`
	TakenOver []string  `json:"takenOver"`
	Rolls     bool      `json:"rolls"`
	Pruned    []string  `json:"pruned"`
	Unowned   []string  `json:"unowned"`
	Kept      []string  `json:"kept"`
}

type planDoc struct {
	Plans []struct {
		Owner                 string      `json:"owner"`
		Kind                  string      `json:"kind"`
		Name                  string      `json:"name"`
		LegacyManagersDropped []string    `json:"legacyManagersDropped"`
		Outcome               planOutcome `json:"outcome"`
		Alternative           planOutcome `json:"alternative"`
	} `json:"plans"`
	Prunes bool `json:"prunes"`
}

// outcomeOf is what actually happened to a Deployment's pod-template keys, in the plan's terms:
// before is the Deployment before the operator ran, after as it is now.
func outcomeOf(before, after *appsv1.Deployment) planOutcome {
	idx, err := managed.NewIndex(after.ManagedFields)
	Expect(err).NotTo(HaveOccurred())
	out := planOutcome{Pruned: []string{}, Unowned: []string{}, Kept: []string{}}
	for _, part := range []struct {
		name          string
		before, after map[string]string
	}{
		{"label", before.Spec.Template.Labels, after.Spec.Template.Labels},
		{"annotation", before.Spec.Template.Annotations, after.Spec.Template.Annotations},
	} {
		field := part.name + "s"
		for _, k := range slices.Sorted(maps.Keys(part.before)) {
			if _, ok := part.after[k]; !ok {
				out.Pruned = append(out.Pruned, part.name+":"+k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(part.after)) {
			out.Kept = append(out.Kept, part.name+":"+k)
			owners := idx.Owners(templateKey(field, k))
			if len(owners) == 0 {
				out.Unowned = append(out.Unowned, part.name+":"+k)
				owners = []managed.Owner{}
			}
			v := part.after[k]
			out.Keys = append(out.Keys, planKey{Part: part.name, Key: k, After: &v, Owners: owners})
		}
	}
	return out
}

// predicted keeps what the test reads of the operator's outcome: for a Deployment, the pod-template
// keys that exist afterwards with their values and owners; for every kind, what is pruned and
// what is left unowned.
func predicted(kind string, o planOutcome) planOutcome {
	out := planOutcome{Pruned: o.Pruned, Unowned: o.Unowned}
	if kind != "Deployment" {
		return out
	}
	out.Kept = o.Kept
	for _, k := range o.Keys {
		if k.After != nil && k.Part != "field" {
			out.Keys = append(out.Keys, planKey{Part: k.Part, Key: k.Key, After: k.After, Owners: k.Owners})
		}
	}
	return out
}

// podKeys keeps the pod-template keys of a list of the plan.
func podKeys(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if !strings.HasPrefix(id, "field:") {
			out = append(out, id)
		}
	}
	return out
}

// read reads the object of kind named, typed.
func read(ns, kind, name string) client.Object {
	var obj client.Object
	switch kind {
	case "Deployment":
		obj = &appsv1.Deployment{}
	case "Service":
		obj = &corev1.Service{}
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	default:
		Fail("no kind " + kind)
	}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, obj)).To(Succeed())
	return obj
}

var builtinTypes = applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)

// fieldOutcome is what happened to the fields of an object other than pod-template keys: the
// leaves that are gone (pruned), and the leaves someone owned before and nobody owns now
// (released), as "field:PATH", in the plan's order.
func fieldOutcome(kind string, before, after client.Object) (pruned, released []string) {
	sets := func(obj client.Object) (*fieldpath.Set, *managed.Index) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		Expect(err).NotTo(HaveOccurred())
		uu := &unstructured.Unstructured{Object: u}
		uu.SetGroupVersionKind(schema.GroupVersionKind{Group: map[string]string{"Deployment": "apps"}[kind], Version: "v1", Kind: kind})
		tv, err := builtinTypes.ObjectToTyped(uu, typed.AllowDuplicates)
		Expect(err).NotTo(HaveOccurred())
		set, err := tv.ToFieldSet()
		Expect(err).NotTo(HaveOccurred())
		idx, err := managed.NewIndex(obj.GetManagedFields())
		Expect(err).NotTo(HaveOccurred())
		return set, idx
	}
	skip := func(p fieldpath.Path) bool {
		s := p.String()
		for _, prefix := range []string{".spec.template.metadata.labels", ".spec.template.metadata.annotations", ".metadata.managedFields",
			".metadata.resourceVersion", ".metadata.generation", ".status",
			".metadata.annotations." + ownership.RecordLabels, ".metadata.annotations." + ownership.RecordAnnotations, ".metadata.annotations." + ownership.LegacyHash} {
			if strings.HasPrefix(s, prefix) {
				return true
			}
		}
		return false
	}
	beforeSet, beforeIdx := sets(before)
	afterSet, afterIdx := sets(after)
	beforeSet.Leaves().Difference(afterSet).Iterate(func(p fieldpath.Path) {
		if !skip(p) {
			pruned = append(pruned, "field:"+strings.TrimPrefix(p.String(), "."))
		}
	})
	afterSet.Leaves().Iterate(func(p fieldpath.Path) {
		if !skip(p) && len(afterIdx.Owners(p)) == 0 && len(beforeIdx.Owners(p)) > 0 {
			released = append(released, "field:"+strings.TrimPrefix(p.String(), "."))
		}
	})
	return pruned, released
}

var _ = Describe("kubectl llmkube", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("owners: spec keys, operator keys, another tool's key, a forced conflict and an unowned key [P1]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "own", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
			i.Spec.PodAnnotations = map[string]string{"example.com/owner": "alice"}
		})
		eventuallyDeployment(ns, "own", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		})
		eventually(ns, "own", &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(s.ManagedFields).NotTo(BeEmpty())
		})
		settle(isvcController, reconciles(isvcController), 0)
		// Stopped, so that the forced conflict below stays for the plugin to see.
		op.stop()

		otherToolsWrite(ns, "own")
		_, err := applyAs("helm", `apiVersion: apps/v1
kind: Deployment
metadata: {name: own, namespace: `+ns+`}
spec: {template: {metadata: {labels: {team: b}}}}
`, "--force-conflicts")
		Expect(err).NotTo(HaveOccurred())
		By("an unowned key: written by a tool whose managedFields entry is then removed")
		Expect(k8sClient.Patch(suiteCtx, deployment(ns, "own"), client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"template":{"metadata":{"labels":{"orphan":"1"}}}}}`)), client.FieldOwner("one-off-script"))).To(Succeed())
		edit(ns, "own", &appsv1.Deployment{}, func(d *appsv1.Deployment) {
			d.ManagedFields = slices.DeleteFunc(d.ManagedFields, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == "one-off-script" })
		})

		var report struct {
			Object       string      `json:"object"`
			LegacyTraces bool        `json:"legacyTraces"`
			Rows         []ownersRow `json:"rows"`
		}
		llmkubeJSON(&report, "owners", "isvc/own", "-n", ns)
		Expect(report.Object).To(Equal("isvc/own"))
		Expect(report.LegacyTraces).To(BeFalse())

		app := rowOf(report.Rows, "label", "app")
		Expect(app.Source).To(Equal("operator"))
		Expect(app.Owners).To(Equal([]managed.Owner{operatorApply}))
		Expect(rowOf(report.Rows, "annotation", "karpenter.sh/do-not-disrupt").Source).To(Equal("operator"))

		tier := rowOf(report.Rows, "label", "tier")
		Expect(tier.Source).To(Equal("spec"))
		Expect(tier.Value).To(Equal("gold"))
		Expect(tier.Flags).To(BeEmpty())
		Expect(rowOf(report.Rows, "annotation", "example.com/owner").Source).To(Equal("spec"))

		gitops := rowOf(report.Rows, "label", "gitops.example.com/tracked")
		Expect(gitops.Source).To(Equal("other"))
		Expect(gitops.Owners).To(Equal([]managed.Owner{{Manager: "argocd-controller", Operation: "Update"}}))
		Expect(rowOf(report.Rows, "annotation", "sidecar.example.com/injected").Owners).To(Equal([]managed.Owner{{Manager: "sidecar-injector", Operation: "Apply"}}))

		team := rowOf(report.Rows, "label", "team")
		Expect(team.Value).To(Equal("b"))
		Expect(team.Want).To(HaveValue(Equal("a")))
		Expect(team.Source).To(Equal("other"))
		Expect(team.Owners).To(Equal([]managed.Owner{{Manager: "helm", Operation: "Apply"}}))
		Expect(team.Flags).To(ConsistOf("conflict"))

		orphan := rowOf(report.Rows, "label", "orphan")
		Expect(orphan.Source).To(Equal("unowned"))
		Expect(orphan.Owners).To(BeEmpty())
		Expect(orphan.Flags).To(ConsistOf("unowned"))

		By("the table: aligned columns, no colour")
		table, _, code := llmkube("owners", "isvc/own", "-n", ns)
		Expect(code).To(Equal(0))
		Expect(table).NotTo(ContainSubstring("\x1b["))
		lines := strings.Split(table, "\n")
		header := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "PART") })
		Expect(header).To(BeNumerically(">=", 0))
		col := strings.Index(lines[header], "SOURCE")
		for _, l := range lines[header+1:] {
			if l == "" {
				continue
			}
			Expect(l[col-2:col]).To(Equal("  "), "SOURCE column not aligned in %q", l)
		}
		Expect(table).To(MatchRegexp(`label\s+team\s+b \(wants a\)\s+other\s+helm \(Apply\)\s+conflict`))
		Expect(table).To(MatchRegexp(`label\s+orphan\s+1\s+unowned\s+-\s+unowned`))

		By("--all-fields lists every field the operator applies")
		var all struct {
			Rows []ownersRow `json:"rows"`
		}
		llmkubeJSON(&all, "owners", "isvc/own", "-n", ns, "--all-fields")
		image := rowOf(all.Rows, "Deployment", `spec.template.spec.containers[name="model-server"].image`)
		Expect(image.Source).To(Equal("operator"))
		Expect(rowOf(all.Rows, "Service", "spec.type").Owners).To(Equal([]managed.Owner{operatorApply}))
	})

	It("owners and diff say what to do when the object, the access or the CRDs are missing [P4]", func() {
		_, stderr, code := llmkube("owners", "isvc/nope", "-n", ns)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring(`no InferenceService "nope" in namespace "` + ns + `"`))
		_, stderr, code = llmkube("diff", "deploy/x", "-n", ns)
		Expect(code).To(Equal(2), "diff exits 2 on an error, as kubectl diff")
		Expect(stderr).To(ContainSubstring("use isvc/NAME or mr/NAME"))

		By("a user without RBAC is told what to ask for")
		dir := GinkgoT().TempDir()
		nobody := writeKubeconfig(env, envtest.User{Name: "nobody"}, dir)
		_, stderr, code = llmkubeAs(nobody, "migration", "plan", "-n", ns)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("no access"))
		Expect(stderr).To(ContainSubstring(`ask your cluster admin for get and list on inferenceservices in namespace "` + ns + `"`))
	})

	It("diff: nothing before a spec change, the change after it, nothing once the operator applied it [P2]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "d", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
		})
		eventuallyDeployment(ns, "d", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()

		type diffDoc struct {
			Objects []struct {
				Kind   string `json:"kind"`
				Action string `json:"action"`
				Diff   string `json:"diff"`
			} `json:"objects"`
		}
		actions := func(doc diffDoc) map[string]string {
			out := map[string]string{}
			for _, o := range doc.Objects {
				out[o.Kind] = o.Action
			}
			return out
		}
		var before diffDoc
		llmkubeJSON(&before, "diff", "isvc/d", "-n", ns)
		Expect(actions(before)).To(Equal(map[string]string{"Deployment": "unchanged", "Service": "unchanged"}))

		gen := deployment(ns, "d").Generation
		editISVC(ns, "d", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels["team"] = "b"
			i.Spec.PodAnnotations = map[string]string{"example.com/owner": "bob"}
		})
		var after diffDoc
		llmkubeJSON(&after, "diff", "isvc/d", "-n", ns)
		Expect(actions(after)).To(Equal(map[string]string{"Deployment": "change", "Service": "unchanged"}))
		text, _, code := llmkube("diff", "isvc/d", "-n", ns)
		Expect(code).To(Equal(1), "something would change")
		Expect(text).To(ContainSubstring("--- live/Deployment/" + ns + "/d"))
		Expect(text).To(ContainSubstring("+++ applied/Deployment/" + ns + "/d"))
		Expect(text).To(MatchRegexp(`(?m)^-\s+team: a$`))
		Expect(text).To(MatchRegexp(`(?m)^\+\s+team: b$`))
		Expect(text).To(MatchRegexp(`(?m)^\+\s+example.com/owner: bob$`))
		Expect(deployment(ns, "d").Generation).To(Equal(gen), "diff wrote to the Deployment")

		By("once the operator applied the change, there is nothing left to diff")
		startOperator(ns, controllers.Config{})
		eventuallyDeployment(ns, "d", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
		})
		settle(isvcController, reconciles(isvcController), 0)
		var done diffDoc
		llmkubeJSON(&done, "diff", "isvc/d", "-n", ns)
		Expect(actions(done)).To(Equal(map[string]string{"Deployment": "unchanged", "Service": "unchanged"}))
	})

	DescribeTable("migration plan predicts exactly what the operator's migration then does [P5]",
		func(adopt bool) {
			By("objects the records-based operator left, with and without records, and a router")
			upgradeScenario(ns, "up")
			newISVC(ns, "norec", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "old": "x"}
			})
			legacyReconcile(ns, "norec", false)
			otherToolsWrite(ns, "norec")
			editISVC(ns, "norec", func(i *inferencev1alpha1.InferenceService) { delete(i.Spec.PodLabels, "old") })
			markReady(ns, "norec")    // startup protection: do-not-disrupt stays owned, and leaves with a roll
			newISVC(ns, "clean", nil) // no legacy trace: not in the plan
			By("the legacy operator's Service and a router's ConfigMap with a key the spec no longer has")
			legacyCreate(inferenceservice.Service(getISVC(ns, "up")), &corev1.Service{})
			router := newRouter(ns, "r", nil)
			legacyCreate(modelrouter.ConfigMap(router, map[string]string{"legacy.json": "{}"}), &corev1.ConfigMap{})

			args := []string{"migration", "plan", "-n", ns}
			if adopt {
				args = append(args, "--adopt-legacy-ownership")
			}
			var plan planDoc
			llmkubeJSON(&plan, args...)
			objects := []string{}
			for _, p := range plan.Plans {
				objects = append(objects, p.Owner+" "+p.Kind+"/"+p.Name)
			}
			Expect(objects).To(Equal([]string{"isvc/norec Deployment/norec", "isvc/up Deployment/up", "isvc/up Service/up", "mr/r ConfigMap/r-router-proxy"}))
			Expect(plan.Prunes).To(BeTrue(), "tier is pruned from up in both modes")
			for _, p := range plan.Plans {
				Expect(p.LegacyManagersDropped).To(Equal([]string{"manager"}))
			}

			By("-A: every namespace")
			var all struct {
				Plans []struct {
					Namespace string `json:"namespace"`
					Owner     string `json:"owner"`
				} `json:"plans"`
			}
			llmkubeJSON(&all, "migration", "plan", "-A")
			Expect(all.Plans).To(ContainElement(And(HaveField("Namespace", ns), HaveField("Owner", "isvc/up"))))

			By("--fail-on-prune stops a pipeline with exit code 3; the table says the same")
			table, _, code := llmkube(append(args, "--fail-on-prune")...)
			Expect(code).To(Equal(3))
			Expect(table).To(MatchRegexp(`/Deployment/up\s+label\s+tier\s+gold\s+prune`))
			Expect(table).To(ContainSubstring("releases other fields (unowned afterwards, never deleted) [data.legacy.json]"))
			_, _, code = llmkube("migration", "plan", "-n", newNamespace(), "--fail-on-prune")
			Expect(code).To(Equal(0), "nothing to migrate, nothing pruned")

			before := map[string]client.Object{}
			for _, p := range plan.Plans {
				before[p.Kind+"/"+p.Name] = read(ns, p.Kind, p.Name)
			}
			startOperator(ns, controllers.Config{AdoptLegacyOwnership: adopt})
			actual := func(kind, name string) planOutcome {
				b, a := before[kind+"/"+name], read(ns, kind, name)
				out := planOutcome{}
				if kind == "Deployment" {
					out = outcomeOf(b.(*appsv1.Deployment), a.(*appsv1.Deployment))
				}
				pruned, released := fieldOutcome(kind, b, a)
				out.Pruned = append(out.Pruned, pruned...)
				out.Unowned = append(out.Unowned, released...)
				return out
			}
			for _, p := range plan.Plans {
				By("the operator's outcome for " + p.Kind + "/" + p.Name)
				want := predicted(p.Kind, p.Outcome)
				Eventually(func() string {
					return cmp.Diff(want, actual(p.Kind, p.Name), cmpopts.EquateEmpty())
				}).WithTimeout(20*time.Second).Should(BeEmpty(), "plan (-) against what the operator did (+)")
			}
			settle(isvcController, reconciles(isvcController), 0)
			for _, p := range plan.Plans {
				Expect(cmp.Diff(predicted(p.Kind, p.Outcome), actual(p.Kind, p.Name), cmpopts.EquateEmpty())).To(BeEmpty(), p.Kind+"/"+p.Name)
			}
			Expect(plan.Plans[3].Outcome.Unowned).To(Equal([]string{"field:data.legacy.json"}), "the ConfigMap key is released, never deleted")

			up, norec := plan.Plans[1].Outcome, plan.Plans[0].Outcome
			Expect(up.Pruned).To(Equal([]string{"label:tier"}))
			Expect(podKeys(up.Unowned)).To(BeEmpty())
			Expect(up.Unowned).To(ContainElement(`field:spec.template.spec.containers[name="model-server"].imagePullPolicy`),
				"a default the legacy create owned is released")
			if adopt {
				Expect(norec.Pruned).To(Equal([]string{"label:old", "annotation:karpenter.sh/do-not-disrupt"}), "the roll takes the protection along")
				Expect(podKeys(norec.Unowned)).To(BeEmpty())
			} else {
				Expect(norec.Pruned).To(BeEmpty())
				Expect(norec.TakenOver).To(ContainElement("annotation:karpenter.sh/do-not-disrupt"), "no roll: the protection stays, owned")
				Expect(podKeys(norec.Unowned)).To(Equal([]string{"label:old"}), "released, never deleted")
				Expect(plan.Plans[0].Alternative.Pruned).To(Equal([]string{"label:old", "annotation:karpenter.sh/do-not-disrupt"}), "the other mode is shown too")
			}

			By("afterwards nothing is left to migrate, even after a newcomer named manager writes")
			Eventually(func() error {
				d := deployment(ns, "up")
				d.Spec.Template.Labels["newcomer.example.com/rev"] = "1"
				return k8sClient.Update(suiteCtx, d, client.FieldOwner("manager"))
			}).Should(Succeed())
			var again planDoc
			llmkubeJSON(&again, "migration", "plan", "-n", ns)
			Expect(again.Plans).To(BeEmpty())
		},
		Entry("without --adopt-legacy-ownership", false),
		Entry("with --adopt-legacy-ownership", true),
	)
})

// templateKey is the managedFields path of a pod-template label or annotation.
func templateKey(field, key string) fieldpath.Path {
	return fieldpath.MakePathOrDie("spec", "template", "metadata", field, key)
}
