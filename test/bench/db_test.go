/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import "testing"

// metricSum adds every series of the metric named, and says when it is not there.
func TestMetricSum(t *testing.T) {
	text := []byte(`# HELP etcd_mvcc_db_total_size_in_bytes Total size of the underlying database physically allocated in bytes.
# TYPE etcd_mvcc_db_total_size_in_bytes gauge
etcd_mvcc_db_total_size_in_bytes 1.2976128e+07
# HELP apiserver_storage_size_bytes Size of the storage database file physically allocated in bytes.
# TYPE apiserver_storage_size_bytes gauge
apiserver_storage_size_bytes{storage_cluster_id="a"} 100
apiserver_storage_size_bytes{storage_cluster_id="b"} 23
`)
	if v, ok := metricSum(text, "etcd_mvcc_db_total_size_in_bytes"); !ok || v != 12976128 {
		t.Errorf("etcd size = %v, %v; want 12976128", v, ok)
	}
	if v, ok := metricSum(text, "apiserver_storage_size_bytes"); !ok || v != 123 {
		t.Errorf("API server size = %v, %v; want the sum of both series, 123", v, ok)
	}
	if _, ok := metricSum(text, "etcd_mvcc_db_total_size_in_use_in_bytes"); ok {
		t.Error("a metric that is not served was found")
	}
}
