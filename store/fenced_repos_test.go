package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFencedEveryRepository: every repository reached through a fenced
// view is fenced — conversations, schedules and the web console alike:
// once the lease is released and taken again, each kind of write through
// the old view is refused with ErrFenced and writes nothing, while the
// same writes through the new tenure's view go through.
func TestFencedEveryRepository(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		conv, _, err := s.GetOrCreateConversation(ctx, ConversationKey{Bot: "b", Channel: "C", Thread: "T"}, "coder", "alice")
		if err != nil {
			t.Fatal(err)
		}
		sc, err := s.AddSchedule(ctx, Schedule{Source: ScheduleFromChat, Name: "daily", Key: conv.Key, Cron: "0 9 * * *", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		res := "conversation:" + conv.ID
		la, err := s.AcquireLease(ctx, res, "replica-a", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		old := s.Fenced(la)
		if err := s.ReleaseLease(ctx, la); err != nil {
			t.Fatal(err)
		}
		lb, err := s.AcquireLease(ctx, res, "replica-b", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cur := s.Fenced(lb)
		web := ConversationKey{Bot: "console", Channel: "ana", Thread: "w1"}
		fire := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		writes := map[string]func(v *Store, tag string) error{
			"SetModel (conversations)": func(v *Store, tag string) error { return v.SetModel(ctx, conv.ID, tag) },
			"AddSchedule": func(v *Store, tag string) error {
				_, err := v.AddSchedule(ctx, Schedule{Source: ScheduleFromChat, Name: tag, Key: conv.Key, Cron: "0 9 * * *", Prompt: "p"})
				return err
			},
			"RecordScheduleRun": func(v *Store, tag string) error {
				return v.RecordScheduleRun(ctx, sc.ID, fire.Add(time.Duration(len(tag))*time.Hour), "inbox-"+tag)
			},
			"RecordScheduleSkip": func(v *Store, tag string) error {
				return v.RecordScheduleSkip(ctx, sc.ID, fire.Add(time.Duration(len(tag))*time.Hour+time.Minute))
			},
			"AddWebMessage": func(v *Store, tag string) error {
				_, err := v.AddWebMessage(ctx, WebMessage{ID: "w-" + tag, Key: web, Author: "ana", Text: tag})
				return err
			},
		}
		for name, write := range writes {
			if err := write(old, "stale"); !errors.Is(err, ErrFenced) {
				t.Errorf("%s through the old tenure's view = %v, want ErrFenced", name, err)
			}
		}
		// Nothing of the old tenure's was written.
		if row, err := s.ConversationByID(ctx, conv.ID); err != nil || row.Model == "stale" {
			t.Errorf("conversation = %+v, %v; the fenced view's model written", row, err)
		}
		if got, err := s.ScheduleByID(ctx, sc.ID); err != nil || got.Runs != 0 || got.Skips != 0 || got.LastInboxID != "" {
			t.Errorf("schedule = %+v, %v; a fenced run or skip recorded", got, err)
		}
		if all, err := s.SchedulesInChannel(ctx, "b", "C"); err != nil || len(all) != 1 {
			t.Errorf("schedules in the channel = %+v, %v; want only the first", all, err)
		}
		if _, err := s.WebMessage(ctx, "w-stale"); err == nil {
			t.Errorf("web message of the fenced view written")
		}
		for name, write := range writes {
			if err := write(cur, "current"); err != nil {
				t.Errorf("%s through the holder's view: %v", name, err)
			}
		}
	})
}

// TestFencedSameOwnerNewTenure: a replica that released its lease and
// took it again holds a new token; its view of the earlier tenure is
// refused although the owner is the same.
func TestFencedSameOwnerNewTenure(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		conv, _, err := s.GetOrCreateConversation(ctx, ConversationKey{Bot: "b", Channel: "C", Thread: "T"}, "coder", "alice")
		if err != nil {
			t.Fatal(err)
		}
		res := "conversation:" + conv.ID
		prev := Lease{}
		var views []*Store
		for tenure := 0; tenure < 3; tenure++ {
			l, err := s.AcquireLease(ctx, res, "replica-a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if l.Token != prev.Token+1 {
				t.Fatalf("tenure %d: token %d, want %d", tenure, l.Token, prev.Token+1)
			}
			views = append(views, s.Fenced(l))
			for i, v := range views {
				err := v.SetModel(ctx, conv.ID, "m")
				if i == len(views)-1 && err != nil {
					t.Fatalf("tenure %d: write of the current tenure: %v", tenure, err)
				}
				if i < len(views)-1 && !errors.Is(err, ErrFenced) {
					t.Fatalf("tenure %d: write of the same replica's tenure %d = %v, want ErrFenced", tenure, i, err)
				}
			}
			if err := s.ReleaseLease(ctx, l); err != nil {
				t.Fatal(err)
			}
			prev = l
		}
	})
}
