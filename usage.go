package nous

// Usage counts what a run consumed.
//
// One rule holds whatever the provider reports: InputTokens are all prompt
// tokens, cached ones included; OutputTokens include reasoning; TotalTokens is
// InputTokens + OutputTokens. CacheCreationInputTokens, CacheReadInputTokens
// and ReasoningTokens are breakdowns of those counts, not additions to them.
type Usage struct {
	Requests                 int `json:"requests"`                             // model requests made
	ToolCalls                int `json:"tool_calls"`                           // tool calls run
	InputTokens              int `json:"input_tokens"`                         // prompt tokens, cached ones included
	OutputTokens             int `json:"output_tokens"`                        // completion tokens, reasoning included
	TotalTokens              int `json:"total_tokens"`                         // InputTokens + OutputTokens
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitzero"` // part of InputTokens: written to the cache
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitzero"`     // part of InputTokens: read from the cache
	ReasoningTokens          int `json:"reasoning_tokens,omitzero"`            // part of OutputTokens
}

// Add returns the field-by-field sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Requests:                 u.Requests + o.Requests,
		ToolCalls:                u.ToolCalls + o.ToolCalls,
		InputTokens:              u.InputTokens + o.InputTokens,
		OutputTokens:             u.OutputTokens + o.OutputTokens,
		TotalTokens:              u.TotalTokens + o.TotalTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + o.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + o.CacheReadInputTokens,
		ReasoningTokens:          u.ReasoningTokens + o.ReasoningTokens,
	}
}
