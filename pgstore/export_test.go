package pgstore

// The queries whose plans the tests check.
const (
	ListLabeledQuery = listLabeled
	LookupQuery      = lookupLog
)
