package schedstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// ScheduleSource says who made a schedule.
type ScheduleSource string

// Schedule sources.
const (
	ScheduleFromConfig ScheduleSource = "config" // the YAML's schedules (see SyncConfigSchedules)
	ScheduleFromChat   ScheduleSource = "chat"   // !schedule add
	ScheduleFromAgent  ScheduleSource = "agent"  // the agent's schedule tool
)

// Schedule is a prompt sent to an agent on a cron schedule. The store
// keeps the definition as text; the caller parses Cron and TZ.
type Schedule struct {
	ID        int64 // chosen by the store; what !schedule shows
	Source    ScheduleSource
	Name      string
	Key       convstore.ConversationKey // bot, channel and the thread of the target conversation ("" = the channel)
	NewThread bool                      // every run starts a new thread in Key.Channel
	Cron      string
	TZ        string // IANA zone; "" = the bridge's local time
	Prompt    string
	Agent     string // agent profile of new conversations; "" = the bot's
	CatchUp   bool   // a firing missed while the bridge was down runs once at start
	CreatedBy string // user id; "" for config schedules
	// ConversationID is the conversation a chat or agent schedule was made
	// in ("" for config schedules).
	ConversationID string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastFireAt     time.Time // the scheduled time last handled (run or skipped); zero = none yet
	LastInboxID    string    // the ledger message of the last run
	Runs, Skips    int
	RemovedAt      time.Time // zero while active
	RemovedBy      string
}

// Active reports whether the schedule has not been removed.
func (s Schedule) Active() bool { return s.RemovedAt.IsZero() }

const scheduleCols = `id, source, name, bot, channel, thread, new_thread, cron, tz, prompt, agent, catch_up,
	created_by, conversation_id, created_at, updated_at, last_fire_at, last_inbox_id, runs, skips, removed_at, removed_by`

func scanSchedule(r sqldb.Scanner) (Schedule, error) {
	var s Schedule
	var created, updated, lastFire, newThread, catchUp int64
	var removed sql.NullInt64
	err := r.Scan(&s.ID, &s.Source, &s.Name, &s.Key.Bot, &s.Key.Channel, &s.Key.Thread, &newThread, &s.Cron, &s.TZ,
		&s.Prompt, &s.Agent, &catchUp, &s.CreatedBy, &s.ConversationID, &created, &updated, &lastFire, &s.LastInboxID,
		&s.Runs, &s.Skips, &removed, &s.RemovedBy)
	if err != nil {
		return Schedule{}, err
	}
	s.NewThread, s.CatchUp = newThread != 0, catchUp != 0
	s.CreatedAt, s.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	if lastFire != 0 {
		s.LastFireAt = sqldb.FromMS(lastFire)
	}
	if removed.Valid {
		s.RemovedAt = sqldb.FromMS(removed.Int64)
	}
	return s, nil
}

// checkSchedule reports a schedule the store cannot keep.
func checkSchedule(s Schedule) error {
	switch {
	case s.Source != ScheduleFromConfig && s.Source != ScheduleFromChat && s.Source != ScheduleFromAgent:
		return fmt.Errorf("schedule source %q: %w", s.Source, sqldb.ErrInvalidArgument)
	case s.Name == "" || s.Key.Bot == "" || s.Key.Channel == "" || s.Cron == "" || s.Prompt == "":
		return fmt.Errorf("schedule %q: name, bot, channel, cron and prompt are required: %w", s.Name, sqldb.ErrInvalidArgument)
	}
	return nil
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// AddSchedule stores a new chat or agent schedule and returns it as stored
// (ID, timestamps set). Config schedules are stored by SyncConfigSchedules.
func (s *Store) AddSchedule(ctx context.Context, sc Schedule) (Schedule, error) {
	if err := checkSchedule(sc); err != nil {
		return Schedule{}, fmt.Errorf("add schedule: %w", err)
	}
	if sc.Source == ScheduleFromConfig {
		return Schedule{}, fmt.Errorf("add schedule %q: config schedules come from SyncConfigSchedules: %w", sc.Name, sqldb.ErrInvalidArgument)
	}
	var out Schedule
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = insertSchedule(ctx, tx, sc, s.db.NowMS())
		return err
	})
	if err != nil {
		return Schedule{}, fmt.Errorf("add schedule %q: %w", sc.Name, err)
	}
	return out, nil
}

func insertSchedule(ctx context.Context, tx *sql.Tx, sc Schedule, now int64) (Schedule, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO schedules
		(source, name, bot, channel, thread, new_thread, cron, tz, prompt, agent, catch_up, created_by, conversation_id,
		 created_at, updated_at, last_fire_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		sc.Source, sc.Name, sc.Key.Bot, sc.Key.Channel, sc.Key.Thread, sqldb.BoolInt(sc.NewThread), sc.Cron, sc.TZ, sc.Prompt, sc.Agent,
		sqldb.BoolInt(sc.CatchUp), sc.CreatedBy, sc.ConversationID, now, now, msOrZero(sc.LastFireAt)).Scan(&id)
	if err != nil {
		return Schedule{}, sqldb.InsertErr(err)
	}
	return scanSchedule(tx.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, id))
}

// SyncConfigSchedules makes the active config schedules match defs (the
// YAML's, by Name, which must be unique) in one transaction: new names are
// added, changed definitions updated, and active config schedules whose
// name is gone are removed (RemovedBy "config"). A schedule whose cron or
// time zone changed starts counting from now (LastFireAt = now), so a new
// time does not look like a missed run; other changes keep its history.
// It returns how many were added, updated and removed.
func (s *Store) SyncConfigSchedules(ctx context.Context, defs []Schedule) (added, updated, removed int, err error) {
	names := map[string]bool{}
	for _, d := range defs {
		d.Source = ScheduleFromConfig
		if err := checkSchedule(d); err != nil {
			return 0, 0, 0, fmt.Errorf("sync config schedules: %w", err)
		}
		if names[d.Name] {
			return 0, 0, 0, fmt.Errorf("sync config schedules: duplicate name %q: %w", d.Name, sqldb.ErrInvalidArgument)
		}
		names[d.Name] = true
	}
	err = s.db.WithTx(ctx, func(tx *sql.Tx) error {
		now := s.db.NowMS()
		rows, err := tx.QueryContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE source = 'config' AND removed_at IS NULL`)
		if err != nil {
			return fmt.Errorf("read config schedules: %w", err)
		}
		current, err := sqldb.Collect(rows, scanSchedule)
		if err != nil {
			return fmt.Errorf("read config schedules: %w", err)
		}
		byName := map[string]Schedule{}
		for _, c := range current {
			byName[c.Name] = c
			if !names[c.Name] {
				if _, err := tx.ExecContext(ctx, `UPDATE schedules SET removed_at = ?, removed_by = 'config', updated_at = ? WHERE id = ?`,
					now, now, c.ID); err != nil {
					return fmt.Errorf("remove %q: %w", c.Name, err)
				}
				removed++
			}
		}
		for _, d := range defs {
			d.Source = ScheduleFromConfig
			c, ok := byName[d.Name]
			if !ok {
				if _, err := insertSchedule(ctx, tx, d, now); err != nil {
					return fmt.Errorf("add %q: %w", d.Name, err)
				}
				added++
				continue
			}
			if c.Key == d.Key && c.NewThread == d.NewThread && c.Cron == d.Cron && c.TZ == d.TZ && c.Prompt == d.Prompt &&
				c.Agent == d.Agent && c.CatchUp == d.CatchUp {
				continue
			}
			lastFire := msOrZero(c.LastFireAt)
			if c.Cron != d.Cron || c.TZ != d.TZ {
				lastFire = now
			}
			if _, err := tx.ExecContext(ctx, `UPDATE schedules SET bot = ?, channel = ?, thread = ?, new_thread = ?, cron = ?, tz = ?,
				prompt = ?, agent = ?, catch_up = ?, last_fire_at = ?, updated_at = ? WHERE id = ?`,
				d.Key.Bot, d.Key.Channel, d.Key.Thread, sqldb.BoolInt(d.NewThread), d.Cron, d.TZ, d.Prompt, d.Agent, sqldb.BoolInt(d.CatchUp), lastFire, now, c.ID); err != nil {
				return fmt.Errorf("update %q: %w", d.Name, err)
			}
			updated++
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("sync config schedules: %w", err)
	}
	return added, updated, removed, nil
}

// ScheduleByID returns schedule id, active or removed, or an error
// wrapping sqldb.ErrNotFound.
func (s *Store) ScheduleByID(ctx context.Context, id int64) (Schedule, error) {
	sc, err := scanSchedule(s.db.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Schedule{}, fmt.Errorf("schedule %d: %w", id, sqldb.ErrNotFound)
	case err != nil:
		return Schedule{}, fmt.Errorf("get schedule %d: %w", id, err)
	}
	return sc, nil
}

// ActiveSchedules returns every active schedule ordered by ID.
func (s *Store) ActiveSchedules(ctx context.Context) ([]Schedule, error) {
	return s.schedulesWhere(ctx, "active schedules", `removed_at IS NULL`)
}

// SchedulesInChannel returns the active schedules of bot whose runs go to
// channel (any thread), ordered by ID.
func (s *Store) SchedulesInChannel(ctx context.Context, bot, channel string) ([]Schedule, error) {
	return s.schedulesWhere(ctx, "schedules of "+bot+"/"+channel, `removed_at IS NULL AND bot = ? AND channel = ?`, bot, channel)
}

// SchedulesOfConversation returns the active schedules made in
// conversation convID (by chat or by its agent), ordered by ID.
func (s *Store) SchedulesOfConversation(ctx context.Context, convID string) ([]Schedule, error) {
	return s.schedulesWhere(ctx, "schedules of conversation "+convID, `removed_at IS NULL AND conversation_id = ?`, convID)
}

func (s *Store) schedulesWhere(ctx context.Context, what, where string, args ...any) ([]Schedule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := sqldb.Collect(rows, scanSchedule)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// RemoveSchedule removes active schedule id, recording who did. A schedule
// that does not exist or is already removed gives sqldb.ErrNotFound.
func (s *Store) RemoveSchedule(ctx context.Context, id int64, by string) error {
	now := s.db.NowMS()
	res, err := s.db.Exec(ctx, false, `UPDATE schedules SET removed_at = ?, removed_by = ?, updated_at = ?
		WHERE id = ? AND removed_at IS NULL`, now, by, now, id)
	if err != nil {
		return fmt.Errorf("remove schedule %d: %w", id, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return fmt.Errorf("remove schedule %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("remove schedule %d: %w", id, sqldb.ErrNotFound)
	}
	return nil
}

// RecordScheduleRun notes that the firing at fireAt of schedule id ran as
// ledger message inboxID.
func (s *Store) RecordScheduleRun(ctx context.Context, id int64, fireAt time.Time, inboxID string) error {
	return s.recordFire(ctx, id, `last_fire_at = ?, last_inbox_id = ?, runs = runs + 1`, fireAt.UnixMilli(), inboxID)
}

// RecordScheduleSkip notes that the firing at fireAt of schedule id was
// skipped (its previous run was still going, or it was missed and the
// schedule does not catch up).
func (s *Store) RecordScheduleSkip(ctx context.Context, id int64, fireAt time.Time) error {
	return s.recordFire(ctx, id, `last_fire_at = ?, skips = skips + 1`, fireAt.UnixMilli())
}

func (s *Store) recordFire(ctx context.Context, id int64, set string, args ...any) error {
	args = append(args, s.db.NowMS(), id)
	res, err := s.db.Exec(ctx, false, `UPDATE schedules SET `+set+`, updated_at = ? WHERE id = ?`, args...)
	if err != nil {
		return fmt.Errorf("record firing of schedule %d: %w", id, err)
	}
	n, err := sqldb.RowsAffected(res)
	switch {
	case err != nil:
		return fmt.Errorf("record firing of schedule %d: %w", id, err)
	case n == 0:
		return fmt.Errorf("record firing of schedule %d: %w", id, sqldb.ErrNotFound)
	}
	return nil
}
