/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/operator/test/helmtool"
)

// TestMain lets this test binary be the plain hop too, as cmd/bench-proxy is in a real run.
func TestMain(m *testing.M) {
	if u := os.Getenv(PlainHopEnv); u != "" {
		if err := ServePlainHop(u); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole benchmark small: every mode answers every request, the streams reach
// the proxy, the report renders. It asserts no time: CI's machines vary.
func TestSmoke(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "router-proxy")
	build := exec.Command("go", "build", "-o", bin, "./cmd/router-proxy")
	build.Dir = helmtool.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{
		ProxyBinary: bin, HopCommand: []string{self},
		Concurrency: 4, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond, Rounds: 1,
		TTFBSamples: 5, Streams: 20, SkipPayloads: true, Log: testLog{t},
		Hostile: 2, Uploads: 2, UploadSize: 1 << 20, BodyCPURequests: 2, BodyCPUSize: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	for m, n := range res.Failures {
		if n != 0 {
			t.Errorf("%s: %d requests failed", m, n)
		}
	}
	for _, m := range Modes {
		if res.Through[m].Requests == 0 || res.TTFB[m].P50 == 0 {
			t.Errorf("%s measured nothing: %+v %+v", m, res.Through[m], res.TTFB[m])
		}
	}
	if res.RSS[Router].StreamsRSS == 0 {
		t.Error("no RSS")
	}
	if h := res.Hostile; h == nil || h.Alone.Requests == 0 || h.SlowBodies.Requests == 0 || h.NonReading.Requests == 0 {
		t.Errorf("the hostile case measured nothing: %+v", h)
	}
	if u := res.Uploads; u == nil || u.Admitted+u.Refused != 2 || u.Peak == 0 {
		t.Errorf("the uploads case: %+v", u)
	}
	if c := res.BodyCPU; c == nil || len(c.PerMiB["multipart"]) != 2 {
		t.Errorf("the body CPU case: %+v", c)
	}
	t.Log("\n" + Markdown(res))
}

// testLog sends the run's progress lines (which name the phase a failed request was in) to the
// test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
