/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// Target is an object a command names: isvc/NAME or mr/NAME.
type Target struct {
	// Kind is "InferenceService" or "ModelRouter".
	Kind string
	Name string
}

// Short is the target as typed: isvc/NAME or mr/NAME.
func (t Target) Short() string {
	if t.Kind == "ModelRouter" {
		return "mr/" + t.Name
	}
	return "isvc/" + t.Name
}

// ParseTarget reads isvc/NAME or mr/NAME (and the kinds' other names).
func ParseTarget(arg string) (Target, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || name == "" {
		return Target{}, fmt.Errorf("%q: name an object as isvc/NAME or mr/NAME", arg)
	}
	switch strings.ToLower(kind) {
	case "isvc", "inferenceservice", "inferenceservices":
		return Target{Kind: "InferenceService", Name: name}, nil
	case "mr", "modelrouter", "modelrouters":
		return Target{Kind: "ModelRouter", Name: name}, nil
	}
	return Target{}, fmt.Errorf("%q: unknown kind %q: use isvc/NAME or mr/NAME", arg, kind)
}

// ParseTargets reads TYPE/NAME... or TYPE NAME... (kubectl's two forms).
func ParseTargets(args []string) ([]Target, error) {
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		if len(args) == 1 {
			return nil, fmt.Errorf("%q: name an object as TYPE/NAME or TYPE NAME (isvc or mr)", args[0])
		}
		typed := make([]string, 0, len(args)-1)
		for _, name := range args[1:] {
			typed = append(typed, args[0]+"/"+name)
		}
		args = typed
	}
	out := make([]Target, 0, len(args))
	for _, a := range args {
		t, err := ParseTarget(a)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Objects are an InferenceService or a ModelRouter and its live Deployment.
type Objects struct {
	ISVC   *inferencev1alpha1.InferenceService
	Router *inferencev1alpha1.ModelRouter
	// Deployment is the generated Deployment; nil when it does not exist yet.
	Deployment *appsv1.Deployment
}

// Object is the InferenceService or the ModelRouter.
func (o *Objects) Object() client.Object {
	if o.Router != nil {
		return o.Router
	}
	return o.ISVC
}

// Target is the object as a command names it.
func (o *Objects) Target() Target {
	if o.Router != nil {
		return Target{Kind: "ModelRouter", Name: o.Router.Name}
	}
	return Target{Kind: "InferenceService", Name: o.ISVC.Name}
}

// Short is the object as typed: isvc/NAME or mr/NAME.
func (o *Objects) Short() string { return o.Target().Short() }

// Namespace is the object's namespace.
func (o *Objects) Namespace() string { return o.Object().GetNamespace() }

// DeploymentName is the generated Deployment's name.
func (o *Objects) DeploymentName() string {
	if o.Router != nil {
		return modelrouter.Name(o.Router)
	}
	return o.ISVC.Name
}
