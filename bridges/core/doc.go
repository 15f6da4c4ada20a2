// Package core is the platform-neutral conversation core: Core implements
// bridges.Handler for every adapter, records each message in the ledger
// (Submit, the one entry point for people, schedules and the agent's
// tools), and runs one worker per active conversation that drives its
// agent process: turns, delivery through the outbox, recovery after
// crashes, approvals and questions, and chat commands.
package core
