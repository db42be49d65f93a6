package nous

import (
	"encoding/json"

	"github.com/nous-go/nous/internal/jsonx"
)

// The Data keys of the step_end event [Context.EndStep] logs.
const (
	DataUsage    = "usage"    // the model call's Usage, as its JSON object
	DataProvider = "provider" // the provider adapter that made the call
)

// EndStep records the end of one model call: u is added to the context's
// Usage, as [Context.AddUsage] does, and a step_end event is logged whose
// Data holds u (under [DataUsage]) and provider (under [DataProvider],
// when not ""), after the reply's message when there is one. So the log
// keeps what each call cost, which a trace of the session reads
// ([StepUsage]); Usage alone holds only the sum. The provider adapters'
// Send and Stream functions call it; a runtime with a loop of its own
// calls it in place of AddUsage.
func (c *Context) EndStep(u Usage, provider string) {
	c.AddUsage(u)
	data := map[string]any{DataUsage: usageData(u)}
	if provider != "" {
		data[DataProvider] = provider
	}
	c.ready()
	r := record{typ: EventStepEnd, at: now(), data: data}
	c.log.push(&r)
	c.observe()
}

// usageData returns u as the JSON object Data holds (whole numbers as
// int, as a load decodes them).
func usageData(u Usage) map[string]any {
	b, _ := json.Marshal(u) // a struct of ints always encodes
	d, _ := jsonx.DecodeMap(b)
	return d
}

// StepUsage returns the usage a step_end event records ([Context.EndStep]),
// and false for any other event, or one that records none.
func StepUsage(e Event) (Usage, bool) {
	if e.Type != EventStepEnd {
		return Usage{}, false
	}
	d, ok := e.Data[DataUsage].(map[string]any)
	if !ok {
		return Usage{}, false
	}
	b, err := json.Marshal(d)
	var u Usage
	if err != nil || json.Unmarshal(b, &u) != nil {
		return Usage{}, false
	}
	return u, true
}
