package human

import "time"

// DurationFlag is a command-line flag value (it satisfies pflag.Value and
// flag.Value) holding a duration that ParseDuration reads, so every
// duration flag takes days and weeks (7d, 2w) as well as Go's units.
//
// String writes the value as time.Duration.String does (720h0m0s), not
// as Duration does (30d): pflag's GetDuration parses String back with
// time.ParseDuration, so code that reads the flag with GetDuration keeps
// working unchanged and exactly, without Duration's rounding. Help text
// shows the default in Duration's form through DefValue (see the
// command line's durationFlag).
type DurationFlag time.Duration

// NewDurationFlag returns a DurationFlag holding d.
func NewDurationFlag(d time.Duration) *DurationFlag {
	f := DurationFlag(d)
	return &f
}

// Set reads s with ParseDuration.
func (f *DurationFlag) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*f = DurationFlag(d)
	return nil
}

// String is the value as time.ParseDuration reads it back.
func (f *DurationFlag) String() string { return time.Duration(*f).String() }

// Type names the value in help text and to pflag's typed getters.
func (f *DurationFlag) Type() string { return "duration" }

// Duration returns the value.
func (f *DurationFlag) Duration() time.Duration { return time.Duration(*f) }
