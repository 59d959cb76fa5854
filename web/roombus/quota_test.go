package roombus

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/internal/webtest"
)

// A bus made before issue 34 (a bucket whose keys cannot have a TTL of
// their own, recordings with no bound per room) is brought up to date when
// a replica opens it: its rooms and entries stay.
func TestOpenBringsOldBusUpToDate(t *testing.T) {
	ns := webtest.StartNATS(t, &server.Options{Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir()})
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := t.Context()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RoomBucket, History: 1, TTL: 12 * time.Hour, MaxBytes: MaxBucket, MaxValueSize: MaxValue})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "K7QX2M", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: TimelineStream, Subjects: []string{TimelineSubject + ">"}, MaxBytes: MaxBucket, Discard: jetstream.DiscardOld, Duplicates: timelineDedup}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, TimelineSubject+"K7QX2M", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}

	b, err := StartBus(BusOptions{URL: ns.ClientURL(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.KeyTTL() {
		t.Error("the old bucket's keys still cannot have a TTL of their own")
	}
	info, err := b.Timeline.Info(ctx)
	if err != nil || info.Config.MaxMsgsPerSubject != RoomEntries || info.State.Msgs != 1 {
		t.Errorf("the old recordings' stream: %d entries a room, %d entries, %v; want %d a room, 1", info.Config.MaxMsgsPerSubject, info.State.Msgs, err, RoomEntries)
	}
	if e, err := b.KV.Get(ctx, "K7QX2M"); err != nil || string(e.Value()) != `{"v":1}` {
		t.Errorf("the old bucket's room: %v", err)
	}
	// A key made with a TTL of its own expires; KeepKey keeps one.
	if _, err := b.KV.Create(ctx, "GONE22", []byte("x"), jetstream.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.KV.Create(ctx, "KEPT22", []byte("y"), jetstream.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	if v, _, kept, err := b.KeepKey(ctx, "KEPT22"); err != nil || !kept || string(v) != "y" {
		t.Fatalf("KeepKey: %q, kept %v, %v", v, kept, err)
	}
	if _, _, kept, err := b.KeepKey(ctx, "KEPT22"); err != nil || kept {
		t.Errorf("KeepKey again: kept %v, %v; want nothing to do", kept, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := b.KV.Get(ctx, "GONE22"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a key with a TTL of 1 s is still there after 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e, err := b.KV.Get(ctx, "KEPT22"); err != nil || string(e.Value()) != "y" {
		t.Errorf("the kept key is gone with the other: %v", err)
	}
}
