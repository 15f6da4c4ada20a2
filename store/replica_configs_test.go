package store

import (
	"context"
	"testing"
	"time"
)

// TestReplicaConfigs: each process's row is replaced by its next record,
// rows not seen since the cut-off are left out, and a removed one is gone.
func TestReplicaConfigs(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		t0 := time.UnixMilli(1_700_000_000_000).UTC()
		for _, rc := range []ReplicaConfig{
			{Replica: "host-a-1", FileHash: "aaa", Generation: 1, AppliedAt: t0, SeenAt: t0},
			{Replica: "host-b-2", FileHash: "aaa", Generation: 1, AppliedAt: t0, SeenAt: t0},
			{Replica: "host-a-1", FileHash: "bbb", Generation: 2, AppliedAt: t0.Add(time.Minute), SeenAt: t0.Add(time.Minute)},
			{Replica: "host-c-3", FileHash: "old", Generation: 7, AppliedAt: t0.Add(-time.Hour), SeenAt: t0.Add(-time.Hour)},
		} {
			if err := s.RecordReplicaConfig(ctx, rc); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.ReplicaConfigs(ctx, t0.Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		want := []ReplicaConfig{
			{Replica: "host-a-1", FileHash: "bbb", Generation: 2, AppliedAt: t0.Add(time.Minute), SeenAt: t0.Add(time.Minute)},
			{Replica: "host-b-2", FileHash: "aaa", Generation: 1, AppliedAt: t0, SeenAt: t0},
		}
		if len(got) != len(want) {
			t.Fatalf("live rows = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if err := s.RemoveReplicaConfig(ctx, "host-b-2"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ReplicaConfigs(ctx, t0.Add(-time.Minute)); err != nil || len(got) != 1 || got[0].Replica != "host-a-1" {
			t.Errorf("after removing host-b-2: %+v, %v", got, err)
		}
		if err := s.RecordReplicaConfig(ctx, ReplicaConfig{Replica: "x"}); err == nil {
			t.Error("a row without a file hash was recorded")
		}
	})
}
