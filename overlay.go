package nous

import "slices"

// overlaySeparator joins the system-prompt overlay to the leading system
// message.
const overlaySeparator = "\n\n"

// leadMode says how the overlay shows in the view.
type leadMode uint8

const (
	leadNone      leadMode = iota // no overlay
	leadOverlaid                  // lead is view[0] with the overlay appended
	leadSynthetic                 // lead is a system message put before view[0]
)

// SetSystemPromptOverlay sets the system-prompt fragment applied when the
// view is read: appended to the leading system message, or a leading system
// message of its own when the view starts otherwise. Setting it again
// replaces it; "" clears it. The overlay is not an event and is never
// serialized: it is derived from configuration on every run.
func (c *Context) SetSystemPromptOverlay(text string) {
	c.view.overlay = text
	c.refreshLead()
}

// SystemPromptOverlay returns the overlay set by SetSystemPromptOverlay.
func (c *Context) SystemPromptOverlay() string { return c.view.overlay }

// refreshLead recomputes how the overlay shows in the view, after the overlay
// or the first entry of the view changed.
func (c *Context) refreshLead() { c.view.refreshLead(&c.log, c.StartedAt) }

// withOverlay returns the system message m with the overlay joined to it,
// as the view shows its leading system message. m's maps are shared, never
// written.
func withOverlay(m Message, overlay string) Message {
	switch {
	case m.Content != "":
		m.Content += overlaySeparator + overlay
	case len(m.Parts) > 0:
		m.Parts = append(slices.Clip(m.Parts), TextPart(overlaySeparator+overlay))
	default:
		m.Content = overlay
	}
	return m
}
