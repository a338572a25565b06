/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/llmkube/operator/internal/plugin"
)

func reports() []*Report {
	want := "a"
	return []*Report{
		{Object: "isvc/a", Namespace: "one", Deployment: "a", Rows: []Row{{Part: "label", Key: "team", Value: "b", Want: &want, Source: SourceOther,
			Owners: []Owner{{Manager: "helm", Operation: "Apply"}}, Flags: []string{FlagConflict}}}, names: []string{"deployment.apps/a"}},
		{Object: "isvc/orphan", Namespace: "two", Notes: []string{"Model nowhere does not exist in namespace two"}, Rows: []Row{}},
	}
}

// With -A one table lists every object's rows beside its namespace and object, and an object
// without a Deployment is a comment line that says why.
func TestPrintManyIsOneTableWithNamespaceAndObject(t *testing.T) {
	var out bytes.Buffer
	if err := Print(&out, plugin.Table, reports(), true); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "# two/isvc/orphan: Model nowhere does not exist in namespace two\n") {
		t.Errorf("no note for the object without a Deployment:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^NAMESPACE\s+OBJECT\s+PART\s+KEY\s+VALUE\s+SOURCE\s+OWNERS\s+FLAGS$`).MatchString(text) {
		t.Errorf("no NAMESPACE and OBJECT columns:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^one\s+isvc/a\s+label\s+team\s+b \(wants a\)\s+other\s+helm \(Apply\)\s+conflict$`).MatchString(text) {
		t.Errorf("row of isvc/a:\n%s", text)
	}
}

// -o name prints the objects the rows are of, one a line; -o json a list of reports.
func TestPrintNameAndJSON(t *testing.T) {
	var out bytes.Buffer
	if err := Print(&out, plugin.Name, reports(), true); err != nil {
		t.Fatal(err)
	}
	if out.String() != "deployment.apps/a\n" {
		t.Errorf("-o name = %q", out.String())
	}
	out.Reset()
	if err := Print(&out, plugin.JSON, reports(), true); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Items []Report `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Items) != 2 || doc.Items[1].Notes[0] == "" {
		t.Errorf("-o json: %v, %s", err, out.String())
	}
}

// A Deployment whose Model is gone is left as it is: who owns each key still holds, nothing is
// wanted, and nothing panics for want of a desired Deployment.
func TestRowsOfADeploymentTheOperatorLeavesAlone(t *testing.T) {
	live := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}}}}}
	rows, err := PodMetadata{Live: live, FieldManager: "llmkube"}.Rows()
	if err != nil || len(rows) != 1 || rows[0].Want != nil || rows[0].Source != SourceUnowned {
		t.Fatalf("rows %+v, %v", rows, err)
	}
}
