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

// SetCarryPageSize makes a migration from version 4 read and move n logs
// at a time until restore is called: a test with few logs sees it span
// pages.
func SetCarryPageSize(n int) (restore func()) {
	was := carryPageSize
	carryPageSize = n
	return func() { carryPageSize = was }
}
