/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/operator/test/helmtool"
)

// A field of the three kinds' specs that lets its writer reach something beyond the object: a
// Secret, a claim, a ConfigMap or Service the pods read, a ServiceAccount token, the host, or an
// address the pods send credentials to. The walk stops at the first property whose name says so;
// everything under it is that reference.
var referenceName = regexp.MustCompile(`(?i)secret|claim|configmap|serviceaccount|pickerref|^host|^url$|^address$|^source$`)

// Which chart policy closes each kind of reference, by the property name that found it.
var ruleFor = []struct {
	name *regexp.Regexp
	rule string
}{
	{regexp.MustCompile(`(?i)secret`), "secrets"},
	{regexp.MustCompile(`(?i)claim`), "claims"},
	{regexp.MustCompile(`(?i)configmap|serviceaccount|pickerref`), "references"},
	{regexp.MustCompile(`(?i)^host`), "privileged"},
}

// addresses are the fields naming where the pods connect, with the Secrets they send there. A
// writer chooses both, so the address is safe exactly when each of those Secrets is one the
// writer may read (the secrets rule): then nothing leaves that the writer could not read anyway.
var addresses = map[string][]string{
	"modelrouters spec.backends[].external.url": {"spec.backends[].external.credentialsSecretRef"},
	"modelrouters spec.limits.redis.address":    {"spec.limits.redis.passwordSecretRef"},
	"models spec.source":                        {"spec.sourceSecretRef"},
	"inferenceservices spec.model.source":       {"spec.vllmConfig.hfTokenSecretRef", "spec.tgiConfig.hfTokenSecretRef", "spec.env[].valueFrom.secretKeyRef"},
}

// notReferences are fields the name matches that reach nothing of anyone else's, and why.
var notReferences = map[string]string{
	"inferenceservices spec.resources.hostMemory":                         "a memory request, not the host",
	"inferenceservices spec.extraVolumes[].cephfs.secretFile":             "a file on the node the CephFS plugin reads, not a Secret of the namespace; a node path is the privileged rule's hostPath concern and CephFS needs the node set up",
	"inferenceservices spec.extraVolumes[].ephemeral.volumeClaimTemplate": "a new claim the pod owns and the ephemeral volume controller creates; it names no existing claim",
	"inferenceservices spec.gateway.hostnames":                            "hostnames of the HTTPRoute on the platform's Gateway, whose listeners' allowedRoutes decide which namespaces may attach",
	"modelrouters spec.clients[].secretKeys":                              "keys inside spec.proxy.apiKeySecretRef's Secret, which the secrets rule covers",
}

// schemaReferences walks each CRD's spec schema and returns "plural path" for every reference.
func schemaReferences(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(helmtool.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if len(files) != 3 {
		t.Fatalf("%d CRDs in config/crd/bases, want 3", len(files))
	}
	var out []string
	var walk func(plural string, s *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(plural string, s *apiextensionsv1.JSONSchemaProps, path string) {
		if s.Items != nil && s.Items.Schema != nil {
			walk(plural, s.Items.Schema, path+"[]")
			return
		}
		for name, child := range s.Properties {
			p := path + "." + name
			if referenceName.MatchString(name) {
				out = append(out, plural+" "+p)
				continue
			}
			walk(plural, &child, p)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			walk(crd.Spec.Names.Plural, &spec, "spec")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// policyPath finds the field paths a rendered policy names (in its labels and messages).
var policyPath = regexp.MustCompile(`spec\.[A-Za-z0-9_.\[\]{},]+[A-Za-z0-9_\]}]`)

// expand turns "a.{b,c}.d" into "a.b.d" and "a.c.d" (one level of braces, as the messages use).
func expand(p string) []string {
	open, end := strings.Index(p, "{"), strings.Index(p, "}")
	if open < 0 || end < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expand(p[:open]+alt+p[end+1:])...)
	}
	return out
}

// renderedRules renders every opt-in rule and returns, per rule, the resources it matches and
// the field paths it names.
func renderedRules(t *testing.T) map[string]struct{ resources, paths []string } {
	t.Helper()
	objs := render(t, "--set", "admissionPolicies.enabled=true", "--set", "admissionPolicies.allowedRegistries={ghcr.io/}",
		"--set", "admissionPolicies.maxCacheSize=1Ti", "--set", "admissionPolicies.denyExposedEndpoints=true",
		"--set", "admissionPolicies.denyTolerateAll=true")
	out := map[string]struct{ resources, paths []string }{}
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		spec, _ := json.Marshal(o.Object["spec"])
		var r struct{ resources, paths []string }
		var rules struct {
			MatchConstraints struct {
				ResourceRules []struct{ Resources []string } `json:"resourceRules"`
			} `json:"matchConstraints"`
		}
		if err := json.Unmarshal(spec, &rules); err != nil {
			t.Fatal(err)
		}
		for _, rr := range rules.MatchConstraints.ResourceRules {
			r.resources = append(r.resources, rr.Resources...)
		}
		for _, p := range policyPath.FindAllString(string(spec), -1) {
			r.paths = append(r.paths, expand(p)...)
		}
		out[strings.TrimPrefix(o.GetName(), "llmkube-")] = r
	}
	return out
}

// covers says whether rule matches plural and names path (or a field under it).
func covers(rules map[string]struct{ resources, paths []string }, rule, plural, path string) bool {
	r, ok := rules[rule]
	if !ok || !slices.Contains(r.resources, plural) {
		return false
	}
	return slices.ContainsFunc(r.paths, func(p string) bool { return p == path || strings.HasPrefix(p, path+".") })
}

// [I49] Every reference in the three CRDs' schemas is closed by one of the chart's opt-in
// policies, for the kind that has it: a new field that names a Secret, a claim, a ConfigMap, a
// token or an address fails here until a rule names it (or the table above says why it reaches
// nothing).
func TestEveryReferenceHasAPolicy(t *testing.T) {
	rules := renderedRules(t)
	refs := schemaReferences(t)
	if len(refs) < 30 {
		t.Fatalf("the walk found %d references; it no longer reads the schemas", len(refs))
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		seen[ref] = true
		plural, path, _ := strings.Cut(ref, " ")
		leaf := path[strings.LastIndex(path, ".")+1:]
		if why, ok := notReferences[ref]; ok {
			t.Logf("%s: not a reference (%s)", ref, why)
			continue
		}
		if creds, ok := addresses[ref]; ok {
			for _, c := range creds {
				if !covers(rules, "secrets", plural, c) {
					t.Errorf("%s: the pods send %s there, and the secrets rule does not name it for %s", ref, c, plural)
				}
			}
			continue
		}
		i := slices.IndexFunc(ruleFor, func(r struct {
			name *regexp.Regexp
			rule string
		}) bool {
			return r.name.MatchString(leaf)
		})
		if i < 0 {
			t.Errorf("%s: an address the pods connect to; say in addresses which Secrets they send it", ref)
			continue
		}
		if rule := ruleFor[i].rule; !covers(rules, rule, plural, path) {
			t.Errorf("%s: no chart policy closes it: the %s rule (charts/llmkube/templates/admission-policies.yaml) must name %s for %s",
				ref, rule, path, plural)
		}
	}
	for ref := range addresses {
		if !seen[ref] {
			t.Errorf("addresses names %s, which the schemas no longer have", ref)
		}
	}
	for ref := range notReferences {
		if !seen[ref] {
			t.Errorf("notReferences names %s, which the schemas no longer have", ref)
		}
	}
}
