#!/usr/bin/env bash
# Measures `make run` with the real node as a user meets it: seconds from typing `make run` to the
# line that names the node, and to the first pod of the quick start's samples Ready, then the node's
# memory, then Ctrl-C. `cold` starts from a cache that holds the control plane but not the node's
# binaries, and with no images (Go's build cache stays as it is: say which when you quote it);
# `warm` from what is there. `fresh` is a machine that has built nothing: an empty control-plane
# cache and an empty Go build cache of its own (the module cache stays: downloads are not builds),
# and it prints when each step of the cold path ended and the CPU seconds make run used. Needs
# root; run it where no other real node runs (make bench-run; make bench-fresh for fresh).
set -euo pipefail
mode=${1:?usage: measure-run.sh fresh|cold|warm}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=${KUBEBUILDER_ASSETS:?run through make bench-run}
work=$(mktemp -d /tmp/llmkube-measure-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
cache=$(dirname "$assets")
gocache=$(go env GOCACHE)
if [[ $mode == fresh ]]; then
  cache=$work/cache gocache=$work/gocache
  mkdir -p "$cache" "$gocache"
  rm -rf build/images bin/llmkube-operator-dev
fi
if [[ $mode == cold ]]; then
  cache=$work/cache
  mkdir -p "$cache/$(basename "$assets")"
  for f in kube-apiserver etcd kube-controller-manager kube-scheduler kwok kwok-stages.yaml kwok.version kubectl; do
    ln -s "$assets/$f" "$cache/$(basename "$assets")/$f"
  done
  rm -rf build/images
fi
mkdir -p "$work/home"
log=$work/make-run.log
start=$(date +%s.%N)
# A user without a cluster: no KUBECONFIG, no ~/.kube/config; Go's caches where they are.
env -u KUBECONFIG -u KUBEBUILDER_ASSETS -u MAKEFLAGS -u MAKELEVEL HOME="$work/home" ENVTEST_CACHE="$cache" \
  GOENV="$(go env GOENV)" GOPATH="$(go env GOPATH)" GOCACHE="$gocache" GOMODCACHE="$(go env GOMODCACHE)" \
  setsid /usr/bin/time -f 'make run used %U s user, %S s system CPU' -o "$work/cpu" make --no-print-directory run >"$log" 2>&1 &
pgid=$!
# When each step of the cold path ended, in seconds from the start: the first line of make run's
# output that shows it (the builds of the cluster's binaries print one line each when done).
steps() {
  local -A seen=()
  while kill -0 "$pgid" 2>/dev/null; do
    while IFS= read -r line; do
      [[ -z ${seen[$line]:-} ]] || continue
      seen[$line]=1
      printf 'step at %.0f s: %s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$line"
    done < <(grep -E '^==> (Control plane ready|Real node ready|Built )|^oci:build/images/pause|^  Nodes?:' "$log" 2>/dev/null)
    sleep 1
  done
}
[[ $mode != fresh ]] || steps &
stop() { kill -INT -- "-$pgid" 2>/dev/null || true; wait "$pgid" || true; }
trap 'stop; rm -rf "$work"' EXIT
deadline=$((SECONDS + $([[ $mode == fresh ]] && echo 7200 || echo 1800)))
until grep -qs '^  Nodes\?:' "$log"; do
  kill -0 "$pgid" 2>/dev/null || { cat "$log"; exit 1; }
  (( SECONDS < deadline )) || { echo "make run did not come up"; exit 1; }
  sleep 0.5
done
up=$(date +%s.%N)
# What make run built on the way (node-bin prints its build time, the images their digests).
grep -E '^==> |^    missing:|^oci:build/images|^  Nodes?:' "$log" || true
export KUBECONFIG=$root/.dev/kubeconfig
kubectl apply --server-side -f config/samples/local/ -f config/samples/inference_v1alpha1_modelrouter.yaml >/dev/null
until [[ -n "$(kubectl get pods -o name)" ]]; do (( SECONDS < deadline )) || exit 1; sleep 0.5; done
kubectl wait --for=condition=Ready pod --all --timeout=300s >/dev/null
first=$(kubectl get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\n"}{end}' | sort | head -1)
awk -v mode="$mode" -v start="$start" -v up="$up" -v ready="$(date -d "$first" +%s)" \
  'BEGIN { printf "mode %s: make run to the node line %.0f s, to the first Ready pod %.0f s\n", mode, up - start, ready - start }'
for pid in $(cat /sys/fs/cgroup/pids/llmkube-dev/system/cgroup.procs); do
  printf '%s %s\n' "$(cat /proc/$pid/comm)" "$(awk '/VmRSS/ {print $2}' /proc/$pid/status)"
done | awk '{kb[$1] += $2} END {for (n in kb) printf "node memory: %s %d MiB\n", n, kb[n] / 1024}'
if [[ $mode == fresh ]]; then
  stop
  trap 'rm -rf "$work"' EXIT
  cat "$work/cpu"
fi
