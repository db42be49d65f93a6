package nous

import "math"

// The Data keys of the step_end event [Context.EndStep] logs.
const (
	DataUsage    = "usage"    // the model call's Usage, as its JSON object
	DataProvider = "provider" // the provider adapter that made the call
	DataModel    = "model"    // the model the request named
	DataError    = "error"    // why the call gave no reply to add
)

// Step is what [Context.EndStep] logs of one model call, and [StepOf]
// reads back.
type Step struct {
	Provider string // the provider adapter that made the call ("openai", "anthropic", ...); "" if not told
	Model    string // the model the request named; "" if not told
	Usage    Usage  // what the call consumed
	// Error, when not "", says why the call gave no reply to add: a
	// response that could not be read, or a stream cut short. A request
	// the API refused changes nothing and logs no step.
	Error string
}

// usageFields are the Usage fields as their JSON keys name them, for
// writing and reading a step's usage without a JSON round trip. The
// breakdowns (omitzero in Usage's encoding) are written only when not 0.
var usageFields = []struct {
	key      string
	omitzero bool
	field    func(*Usage) *int
}{
	{"requests", false, func(u *Usage) *int { return &u.Requests }},
	{"tool_calls", false, func(u *Usage) *int { return &u.ToolCalls }},
	{"input_tokens", false, func(u *Usage) *int { return &u.InputTokens }},
	{"output_tokens", false, func(u *Usage) *int { return &u.OutputTokens }},
	{"total_tokens", false, func(u *Usage) *int { return &u.TotalTokens }},
	{"cache_creation_input_tokens", true, func(u *Usage) *int { return &u.CacheCreationInputTokens }},
	{"cache_read_input_tokens", true, func(u *Usage) *int { return &u.CacheReadInputTokens }},
	{"reasoning_tokens", true, func(u *Usage) *int { return &u.ReasoningTokens }},
}

// usageData returns u as the JSON object Data holds, with whole numbers
// as int, as a load decodes them.
func usageData(u Usage) map[string]any {
	d := make(map[string]any, len(usageFields))
	for _, f := range usageFields {
		if v := *f.field(&u); v != 0 || !f.omitzero {
			d[f.key] = v
		}
	}
	return d
}

// StepOf returns the step a step_end event records ([Context.EndStep]),
// and false for any other event, or one that records no usage, or one
// whose usage is not a JSON object of whole numbers.
func StepOf(e Event) (Step, bool) {
	if e.Type != EventStepEnd {
		return Step{}, false
	}
	d, ok := e.Data[DataUsage].(map[string]any)
	if !ok {
		return Step{}, false
	}
	var s Step
	for _, f := range usageFields {
		v, has := d[f.key]
		if !has {
			continue
		}
		n, ok := wholeInt(v)
		if !ok {
			return Step{}, false
		}
		*f.field(&s.Usage) = n
	}
	s.Provider, _ = e.Data[DataProvider].(string)
	s.Model, _ = e.Data[DataModel].(string)
	s.Error, _ = e.Data[DataError].(string)
	return s, true
}

// wholeInt returns v as an int when it is a whole number an int holds:
// an int, as a load decodes one, or an int64 or float64 an application
// put in Data itself.
func wholeInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		if n < math.MinInt || n > math.MaxInt {
			return 0, false
		}
		return int(n), true
	case float64:
		if n != math.Trunc(n) || n < math.MinInt || n >= math.MaxInt {
			return 0, false
		}
		return int(n), true
	}
	return 0, false
}
