package convstore

// Origin says who a ledger message comes from. It decides what the message
// may do: only a person's message may be a chat command or carry anyone's
// rights (see bridges, "origin decides authority").
type Origin string

// Origins of ledger messages.
const (
	OriginPerson   Origin = "person"   // written by a person on a platform
	OriginSchedule Origin = "schedule" // a schedule's firing (InboxMessage.ScheduleID)
	OriginAgent    Origin = "agent"    // submitted by the bridge for the agent's own tools
)

func (o Origin) valid() bool {
	return o == OriginPerson || o == OriginSchedule || o == OriginAgent
}
