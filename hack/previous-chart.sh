#!/usr/bin/env bash
# Packages the chart as it was at COMMIT into test/node/testdata/previous-chart/, the "previous
# chart version" the real-node suite upgrades from (docs/real-node.md, N15).
#
# Note: no release has been tagged yet (the chart's version has been 0.1.0 since it was added), so
# a pinned commit of main stands in for the previous release. Packaged once and committed, so the
# suite needs neither the git history (CI may clone shallow) nor a registry. When a release is
# tagged, run this with its tag and commit the archive.
set -euo pipefail
commit="${1:?usage: hack/previous-chart.sh COMMIT}"
cd "$(dirname "$0")/.."
out=test/node/testdata/previous-chart
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git archive "$commit" charts/llmkube | tar -x -C "$tmp"
rm -rf "$out" && mkdir -p "$out"
go tool -modfile=hack/tools/go.mod helm package "$tmp/charts/llmkube" -d "$out" >/dev/null
git rev-parse "$commit^{commit}" >"$out/COMMIT"
ls -l "$out"
