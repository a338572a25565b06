/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package rollout

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// pod serves a metrics page; body is what it answers.
func pod(t *testing.T, body string) int32 {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
	t.Cleanup(s.Close)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return int32(n)
}

func gateFor(t *testing.T, ports ...int32) *Gate {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	var objs []runtime.Object
	for i, p := range ports {
		objs = append(objs, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: "svc-" + strconv.Itoa(i), Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(p), Protocol: ptr.To(corev1.ProtocolTCP)}},
		})
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build()
	return &Gate{Prober: &Prober{Reader: c, HTTP: &http.Client{Timeout: time.Second}}}
}

func isvc(runtime inferencev1alpha1.Runtime, policy inferencev1alpha1.RolloutPolicy) *inferencev1alpha1.InferenceService {
	policy.WaitForIdle = ptr.To(true)
	return &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"},
		Spec:       inferencev1alpha1.InferenceServiceSpec{Runtime: runtime, RolloutPolicy: &policy},
	}
}

func TestDecide(t *testing.T) {
	idle := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model=\"m\"} 0\n"
	busy := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model=\"m\"} 3\n"
	long := ptr.To(time.Now().Add(-time.Hour))
	cases := []struct {
		name   string
		isvc   *inferencev1alpha1.InferenceService
		pages  []string
		since  *time.Time
		roll   bool
		reason string
	}{
		{"idle rolls", isvc("vllm", inferencev1alpha1.RolloutPolicy{}), []string{idle, idle}, nil, true, ""},
		{"one busy pod waits", isvc("vllm", inferencev1alpha1.RolloutPolicy{}), []string{idle, busy}, nil, false, ReasonWaitingForIdle},
		{"no endpoints roll", isvc("vllm", inferencev1alpha1.RolloutPolicy{}), nil, nil, true, ""},
		{"a page without the gauge is busy", isvc("vllm", inferencev1alpha1.RolloutPolicy{}), []string{"other 1\n"}, nil, false, ReasonWaitingForIdle},
		{"timeout without force keeps waiting", isvc("vllm", inferencev1alpha1.RolloutPolicy{IdleTimeoutSeconds: ptr.To[int32](60)}), []string{busy}, long, false, ReasonIdleTimeoutNotForced},
		{"timeout with force rolls", isvc("vllm", inferencev1alpha1.RolloutPolicy{IdleTimeoutSeconds: ptr.To[int32](60), Force: ptr.To(true)}), []string{busy}, long, true, ""},
		{"before the timeout force waits", isvc("vllm", inferencev1alpha1.RolloutPolicy{IdleTimeoutSeconds: ptr.To[int32](60), Force: ptr.To(true)}), []string{busy}, nil, false, ReasonWaitingForIdle},
		{"generic without force waits", isvc("generic", inferencev1alpha1.RolloutPolicy{}), nil, nil, false, ReasonIdleDetectionUnsupported},
		{"generic with force rolls", isvc("generic", inferencev1alpha1.RolloutPolicy{Force: ptr.To(true)}), nil, nil, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ports []int32
			for _, p := range c.pages {
				ports = append(ports, pod(t, p))
			}
			d, err := gateFor(t, ports...).Decide(context.Background(), c.isvc, "svc", "http", c.since)
			if err != nil {
				t.Fatal(err)
			}
			if d.Roll != c.roll || d.Reason != c.reason {
				t.Fatalf("Decide = roll %v reason %q (%s), want roll %v reason %q", d.Roll, d.Reason, d.Message, c.roll, c.reason)
			}
			if !d.Roll && (d.RequeueAfter <= 0 || d.RequeueAfter > PollInterval*3/2) {
				t.Fatalf("RequeueAfter = %s, want a jittered delay up to %s", d.RequeueAfter, PollInterval*3/2)
			}
		})
	}
}

// A pod whose metrics cannot be read (nothing listens, as behind a KWOK pod's address) is named
// in the deferral with why, never folded silently into a count.
func TestDecideNamesThePodWhoseMetricsCannotBeRead(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	// A port nothing listens on: open a listener and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	idle := pod(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n")
	slice := func(name, podName string, p int32) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{
				Addresses:  []string{"127.0.0.1"},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: podName},
			}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(p), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(slice("a", "svc-silent", port), slice("b", "svc-idle", idle)).Build()
	g := &Gate{Prober: &Prober{Reader: c, HTTP: &http.Client{Timeout: time.Second}}}
	for _, policy := range []inferencev1alpha1.RolloutPolicy{{}, {IdleTimeoutSeconds: ptr.To[int32](1)}} {
		d, err := g.Decide(context.Background(), isvc("vllm", policy), "svc", "http", ptr.To(time.Now().Add(-time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if d.Roll {
			t.Fatalf("Decide rolled with a pod that did not answer")
		}
		if !strings.Contains(d.Message, "pod svc-silent (") || strings.Contains(d.Message, "svc-idle") {
			t.Fatalf("Decide message = %q, want it to name pod svc-silent with why, and not the idle pod", d.Message)
		}
		if len(d.Unreadable) != 1 || !strings.HasPrefix(d.Unreadable[0], "pod svc-silent (") {
			t.Fatalf("Decide Unreadable = %q, want pod svc-silent alone", d.Unreadable)
		}
	}
}
