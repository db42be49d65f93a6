package pgstore

import "time"

// The queries whose plans the tests check, and those whose round trips
// they count.
const (
	ListLabeledQuery = listLabeled
	LookupQuery      = lookupLog
	AppendNextQuery  = appendNext
	NotifyQuery      = notifyLogs
	WatchReadQuery   = watchRead
)

// SetPollEvery makes the Stores opened until restore is called poll the
// logs they watch every d: a test that lengthens it sees the watchers that
// the notifications alone wake.
func SetPollEvery(d time.Duration) (restore func()) {
	was := pollEvery
	pollEvery = d
	return func() { pollEvery = was }
}
