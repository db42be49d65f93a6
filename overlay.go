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
