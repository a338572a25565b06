/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
)

// What a user sees with kubectl: every printer column filled, and field docs that read as a
// manual (no maintainer notes, no line broken inside a sentence).
var _ = Describe("What kubectl shows", func() {
	It("fills every column of kubectl get -o wide for both kinds, READY as ready/desired and BACKENDS as resolved/total [F9]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		// With spec.gateway, so that the wide-only GATEWAY column has a value too (it stays blank for an
		// InferenceService that is not served through a Gateway).
		newISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Gateway = &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{{Name: "gw"}}}
		})
		newRouter(ns, "router", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, isvcBackend("local", "llama"), isvcBackend("gone", "missing"))
		})
		eventually(ns, "llama", &inferencev1alpha1.InferenceService{}, func(g Gomega, o *inferencev1alpha1.InferenceService) {
			g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
			g.Expect(meta.FindStatusCondition(o.Status.Conditions, inferencev1alpha1.ConditionReady)).NotTo(BeNil())
		})
		eventually(ns, "router", &inferencev1alpha1.ModelRouter{}, func(g Gomega, o *inferencev1alpha1.ModelRouter) {
			g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
			g.Expect(o.Status.Backends).To(HaveLen(3))
		})

		isvc := getWide(ns, "isvc")
		Expect(isvc).To(HaveKeyWithValue("NAME", "llama"))
		Expect(isvc).To(HaveKeyWithValue("READY", "0/1"), "no pod runs in the test cluster: 0 of 1 ready, as a Deployment shows it")
		Expect(isvc).To(HaveKeyWithValue("GATEWAY", "Unknown"), "no Gateway controller has answered yet")
		Expect(isvc).To(HaveKeyWithValue("MODEL", "org/repo/model.gguf"), "the inline source without its scheme")
		router := getWide(ns, "mr")
		Expect(router).To(HaveKeyWithValue("NAME", "router"))
		Expect(router).To(HaveKeyWithValue("BACKENDS", "2/3"), "cloud and local resolve, gone names a missing InferenceService")

		By("a replica count change shows in READY's desired count")
		editISVC(ns, "llama", func(o *inferencev1alpha1.InferenceService) { o.Spec.Replicas = ptr.To[int32](3) })
		Eventually(func() map[string]string { return getWide(ns, "isvc") }).Should(HaveKeyWithValue("READY", "0/3"))
	})

	It("shows the Model of a modelRef InferenceService in MODEL, and a Model's users in USED-BY and SERVING", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newModel(ns, "qwen", nil)
		eventually(ns, "qwen", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
		})
		Expect(getWide(ns, "mdl")).To(And(HaveKeyWithValue("USED-BY", "0"), HaveKeyWithValue("SERVING", "0"),
			HaveKeyWithValue("PHASE", "Pending"), HaveKeyWithValue("REASON", "NotInUse")), "zero users show as 0, not as an empty cell")

		refISVC(ns, "chat", "qwen", inferencev1alpha1.RuntimeVLLM, nil)
		eventually(ns, "chat", &inferencev1alpha1.InferenceService{}, func(g Gomega, o *inferencev1alpha1.InferenceService) {
			g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
		})
		out, err := kubectl("", "get", "isvc", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`(?m)^NAME\s+RUNTIME\s+MODEL\s`))
		Expect(out).To(MatchRegexp(`(?m)^chat\s+vllm\s+qwen\s`), "MODEL is the Model spec.modelRef names")
		Eventually(func() map[string]string { return getWide(ns, "mdl") }).Should(And(
			HaveKeyWithValue("USED-BY", "1"), HaveKeyWithValue("SERVING", "0"), HaveKeyWithValue("REASON", "Loading")))
	})

	It("scales an InferenceService with kubectl scale, through the scale subresource an HPA may target too [F9]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", nil)
		eventuallyDeployment(ns, "llama", func(Gomega, *appsv1.Deployment) {})

		_, err := kubectl("", "scale", "isvc", "llama", "-n", ns, "--replicas=3")
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeployment(ns, "llama", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(3))))
		})
		Eventually(func(g Gomega) {
			out, err := kubectl("", "get", "isvc", "llama", "-n", ns, "--subresource=scale", "-o", "jsonpath={.spec.replicas} {.status.selector}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal("3 app=llama,inference.llmkube.dev/service=llama"))
		}).Should(Succeed())
		Eventually(func() []string { return eventNotes(ns, "llama", inferenceservice.EventScaled) }).
			Should(ContainElement(ContainSubstring("runtime pods wanted: 3, was 1")))
	})

	It("kubectl llmkube diff exits like kubectl diff: 0 nothing to do, 1 something would change, 2 on an error [P3]", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", nil)
		eventuallyDeployment(ns, "llama", func(Gomega, *appsv1.Deployment) {})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()

		_, _, code := llmkube("diff", "isvc", "llama", "-n", ns)
		Expect(code).To(Equal(0))
		// The manifest as a user keeps it: the stored object without what the API server adds.
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(inferencev1alpha1.GroupVersion.WithKind("InferenceService"))
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "llama"}, u)).To(Succeed())
		manifest := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
			"metadata": map[string]any{"name": "llama", "namespace": ns}, "spec": u.Object["spec"]}
		data, err := yaml.Marshal(manifest)
		Expect(err).NotTo(HaveOccurred())
		asApplied := string(data)
		dir := GinkgoT().TempDir()
		applied := filepath.Join(dir, "llama.yaml")
		Expect(os.WriteFile(applied, []byte(asApplied), 0o600)).To(Succeed())
		editISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) { i.Spec.Replicas = ptr.To[int32](2) })
		out, _, code := llmkube("diff", "isvc/llama", "-n", ns, "-o", "name")
		Expect(code).To(Equal(1))
		Expect(out).To(Equal("deployment.apps/llama\n"))

		By("diff -f previews a manifest, not the stored object, with the same exit codes")
		_, stderr, code := llmkube("diff", "-f", applied)
		Expect(code).To(Equal(0), "the manifest as the operator last applied it: nothing to do\n%s", stderr)
		fresh := filepath.Join(dir, "fresh.yaml")
		Expect(os.WriteFile(fresh, []byte(strings.NewReplacer("name: llama", "name: fresh").Replace(asApplied)), 0o600)).To(Succeed())
		out, stderr, code = llmkube("diff", "-f", fresh, "-o", "name")
		Expect(code).To(Equal(1), "a manifest not applied yet: its objects would be created\n%s", stderr)
		Expect(out).To(ContainSubstring("deployment.apps/fresh"))
		broken := filepath.Join(dir, "broken.yaml")
		Expect(os.WriteFile(broken, []byte("apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: [\n"), 0o600)).To(Succeed())
		_, _, code = llmkube("diff", "-f", broken)
		Expect(code).To(Equal(2), "a manifest that does not parse is an error")
		_, stderr, code = llmkube("diff", "isvc/nope", "-n", ns)
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring(`no InferenceService "nope"`))
		_, stderr, code = llmkube("diff", "isvc/llama", "-n", ns, "-o", "wide")
		Expect(code).To(Equal(2), "-o wide is refused, never ignored")
		Expect(stderr).To(ContainSubstring("-o wide"))
	})

	for _, kind := range []struct {
		resource string
		crd      string
		goType   reflect.Type
	}{
		{"isvc", "inferenceservices.inference.llmkube.dev", reflect.TypeFor[inferencev1alpha1.InferenceService]()},
		{"mr", "modelrouters.inference.llmkube.dev", reflect.TypeFor[inferencev1alpha1.ModelRouter]()},
		{"mdl", "models.inference.llmkube.dev", reflect.TypeFor[inferencev1alpha1.Model]()},
	} {
		It("[F9] documents every field of "+kind.resource+" for users: a description, no maintainer note, no line broken inside a sentence", func() {
			out, err := kubectl("", "get", "crd", kind.crd, "-o", "jsonpath={.spec.versions[0].schema.openAPIV3Schema}")
			Expect(err).NotTo(HaveOccurred())
			var root schemaNode
			Expect(json.Unmarshal([]byte(out), &root)).To(Succeed())

			docs := map[string]string{kind.resource: root.Description}
			var structs []string
			collectDocs(kind.goType, root, kind.resource, docs, &structs)
			Expect(docs).To(HaveKey(kind.resource + ".spec"))
			Expect(len(docs)).To(BeNumerically(">", 20))
			var problems []string
			for path, d := range docs {
				problems = append(problems, docProblems(path, d)...)
			}
			Expect(problems).To(BeEmpty())

			By("kubectl explain prints each of the kind's structs without a maintainer note")
			for _, path := range structs {
				out, err := kubectl("", "explain", path)
				Expect(err).NotTo(HaveOccurred())
				Expect(maintainerNote.FindString(out)).To(BeEmpty(), "kubectl explain %s:\n%s", path, out)
			}
		})
	}
})

// getWide runs kubectl get -o wide for the one object of resource in ns and returns its cells by
// column header. Every cell must hold a value: tabular output has no marker for an empty cell, so
// an empty one shows as a run of spaces between the neighbouring columns.
func getWide(ns, resource string) map[string]string {
	out, err := kubectl("", "get", resource, "-n", ns, "-o", "wide")
	Expect(err).NotTo(HaveOccurred())
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	Expect(lines).To(HaveLen(2), "one header and one object:\n%s", out)
	header, row := lines[0], lines[1]
	// A header's column starts where its name starts; a cell spans up to the next column.
	starts := regexp.MustCompile(`\S+`).FindAllStringIndex(header, -1)
	cells := map[string]string{}
	for i, s := range starts {
		end := len(row)
		if i+1 < len(starts) {
			end = min(starts[i+1][0], len(row))
		}
		cell := ""
		if s[0] < len(row) {
			cell = strings.TrimSpace(row[s[0]:end])
		}
		name := header[s[0]:s[1]]
		Expect(cell).NotTo(BeEmpty(), "kubectl get %s -o wide: column %s is empty:\n%s", resource, name, out)
		Expect(cell).NotTo(Equal("<none>"), "kubectl get %s -o wide: column %s shows <none>:\n%s", resource, name, out)
		cells[name] = cell
	}
	return cells
}

// schemaNode is the part of a CRD's openAPIV3Schema that carries the docs.
type schemaNode struct {
	Description          string                `json:"description"`
	Properties           map[string]schemaNode `json:"properties"`
	Items                *schemaNode           `json:"items"`
	AdditionalProperties *schemaNode           `json:"additionalProperties"`
}

// apiPackage is the package of the operator's own types; types of other packages (core/v1,
// autoscaling/v2, metav1) carry Kubernetes' own docs, which this test does not judge.
var apiPackage = reflect.TypeFor[inferencev1alpha1.InferenceService]().PkgPath()

// collectDocs walks the Go type t of the operator's API beside its schema s, and records the
// description of every field the operator's types declare (path as kubectl explain takes it), and
// the paths of the structs they declare.
func collectDocs(t reflect.Type, s schemaNode, path string, docs map[string]string, structs *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		if s.Items != nil {
			collectDocs(t.Elem(), *s.Items, path, docs, structs)
		}
		return
	case reflect.Map:
		if s.AdditionalProperties != nil && t.Elem().PkgPath() == apiPackage {
			docs[path+" (values)"] = s.AdditionalProperties.Description
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if t.PkgPath() != apiPackage {
		return
	}
	*structs = append(*structs, path)
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "metadata" {
			continue // inline TypeMeta; ObjectMeta is Kubernetes' own
		}
		child, ok := s.Properties[name]
		Expect(ok).To(BeTrue(), "%s.%s is not in the CRD", path, name)
		docs[path+"."+name] = child.Description
		collectDocs(f.Type, child, path+"."+name, docs, structs)
	}
}

// maintainerNote matches words that belong in comments for maintainers, not in a user's manual.
var maintainerNote = regexp.MustCompile(`\bCEL\b|(?i)cost budget|controller-gen|kubebuilder|named type|deepcopy|\bTODO\b|\bNote:|(?i)maintainer`)

// docProblems says what is wrong with the description d of the field at path: missing, a
// maintainer note, or a line break inside a sentence (a newline not after . : ! ? or another
// newline), which controller-gen keeps from a wrapped comment line.
func docProblems(path, d string) []string {
	var out []string
	if strings.TrimSpace(d) == "" {
		return []string{path + ": no description"}
	}
	if m := maintainerNote.FindString(d); m != "" {
		out = append(out, fmt.Sprintf("%s: maintainer note (%q): %q", path, m, d))
	}
	for i, r := range d {
		if r == '\n' && i > 0 && !strings.ContainsRune(".:!?\n", rune(d[i-1])) {
			out = append(out, fmt.Sprintf("%s: line break inside a sentence after %q: %q", path, d[max(0, i-30):i], d))
			break
		}
	}
	if !strings.HasSuffix(d, ".") {
		out = append(out, fmt.Sprintf("%s: does not end a sentence: %q", path, d))
	}
	return out
}
