package mcpcore

import "github.com/ctxfit/ctxfit"

// MetaMaxResultSizeChars is the tools/list _meta key that tells Claude
// Code how large a tool's results may be before it truncates or diverts
// them.
const MetaMaxResultSizeChars = "anthropic/maxResultSizeChars"

// MaxResultSizeChars is what a guarded tool tells clients of its largest
// result: 8 characters a token of the tool's hard cap.
func MaxResultSizeChars(cfg ctxfit.Config, tool string) int {
	hardCap := cfg.HardCap
	for _, ep := range cfg.Endpoints {
		if ep.Match == tool {
			if ep.HardCap != 0 {
				hardCap = ep.HardCap
			}
			break
		}
	}
	return 8 * hardCap
}
