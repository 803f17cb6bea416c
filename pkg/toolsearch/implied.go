package toolsearch

import "strings"

// A request often implies a step it never names: "save it to
// /root/x.md" needs a tool that writes a file, "nearby" or a route a
// place's coordinates, "estimate" a calculation. Each cue below adds that step's capability words as one
// more part of the request (ranked and fused like the parts the request
// names), so the tools offering it, on whatever backend, compete for a
// place. The cues name capabilities, never tools or servers.

// impliedCue is one cue: any of its phrases in the lower-cased request
// (with a file path too, when path is set) adds the query step.
type impliedCue struct {
	phrases []string
	path    bool
	step    string
}

// impliedCues are the cues, each kept only where it paid on the tuning half
// of LiveMCPBench's tasks and cost no single-intent query set a hit
// (docs/arch/decisions.md).
var impliedCues = []impliedCue{
	{phrases: []string{"save", "write", "draft", "store", "export"}, path: true, step: "write file"},
	{phrases: []string{"nearby", "near ", "route", "distance", "commute", "meeting point", "get there", "directions"}, step: "geocode address coordinates"},
	{phrases: []string{"estimate", "calculate", "budget"}, step: "calculate expression"},
}

// maxCueBytes bounds how much of a request the cues read.
const maxCueBytes = 4096

// implied returns the steps q's cues imply (see impliedCues).
func implied(q string) []string {
	if len(q) > maxCueBytes {
		q = q[:maxCueBytes]
	}
	q = strings.ToLower(q)
	var steps []string
	for _, c := range impliedCues {
		if c.path && !hasPath(q) {
			continue
		}
		for _, p := range c.phrases {
			if strings.Contains(q, p) {
				steps = append(steps, c.step)
				break
			}
		}
	}
	return steps
}

// hasPath reports whether q holds an absolute or home-relative file path.
func hasPath(q string) bool {
	for _, f := range strings.Fields(q) {
		f = strings.Trim(f, "`'\"()[]<>.,;:!?")
		if strings.HasPrefix(f, "/") && strings.Count(f, "/") > 1 || strings.HasPrefix(f, "~/") {
			return true
		}
	}
	return false
}
