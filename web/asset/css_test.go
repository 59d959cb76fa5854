package asset

import "testing"

func TestStripCSSComments(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a { b: c; }\n", "a { b: c; }\n"},
		{"/* why */\na { b: c; } /* more */\n\n/* x\n y */\nd { e: f; }\n", "a { b: c; } \nd { e: f; }\n"},
		{`a::before { content: "/* kept */"; }` + "\n", `a::before { content: "/* kept */"; }` + "\n"},
		{`a { content: 'it\'s /* kept */'; }` + "\n", `a { content: 'it\'s /* kept */'; }` + "\n"},
		{"a { b: c; } /* unclosed", "a { b: c; } \n"},
	} {
		if got := string(StripCSSComments([]byte(tt.in))); got != tt.want {
			t.Errorf("StripCSSComments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
