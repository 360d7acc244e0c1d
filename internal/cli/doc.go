// Package cli is the agentwire command line: the umbrella `agentwire`
// command and the process plumbing every service binary shares (root
// context cancelled on SIGINT/SIGTERM, one-line errors, exit codes).
//
// Exit codes: 0 success, 1 the command failed, 2 the command line or
// configuration is unusable (the message says what to fix).
package cli
