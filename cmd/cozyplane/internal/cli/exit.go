package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/migrate"
	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

// Exit codes, for scripts (docs/cli.md, "Exit codes").
const (
	// ExitFailure: the command failed (the API server refused or could not
	// be reached, or the operation's outcome is a failure, such as a
	// reconcile that left the instance not Ready).
	ExitFailure = 1
	// ExitCheckFailed: check found a configuration that blocks.
	ExitCheckFailed = 2
	// ExitCheckUnknown: check failed nothing but could not decide one.
	ExitCheckUnknown = 3
	// ExitNotFound: the object, or its kind, does not exist.
	ExitNotFound = 4
	// ExitTimeout: the command waited for a controller and it did not
	// answer in --timeout.
	ExitTimeout = 5
	// ExitUsage: the command line is wrong (an unknown command or flag, a
	// malformed argument); nothing was asked of the cluster.
	ExitUsage = 64
)

// ExitError ends the command with Code, after the command printed what it
// had to say (Execute prints nothing more).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// UsageError is a wrong command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// TimeoutError is a wait for a controller that ran out of time.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return e.Err.Error() }
func (e *TimeoutError) Unwrap() error { return e.Err }

func timeoutErrorf(format string, args ...any) error {
	return &TimeoutError{Err: fmt.Errorf(format, args...)}
}

// ExitCode is the exit status for the error a command returned (0 for nil).
func ExitCode(err error) int {
	var exit *ExitError
	var usage *UsageError
	var timeout *TimeoutError
	var notFound *ops.NotFoundError
	var input *ops.InputError
	var batch *batchError
	var migration *migrate.IncompleteError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	case errors.As(err, &batch):
		return batch.code
	case errors.As(err, &usage), errors.As(err, &input), isCobraUsage(err):
		return ExitUsage
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded), errors.As(err, &migration) && migration.TimedOut:
		return ExitTimeout
	case errors.As(err, &notFound), apierrors.IsNotFound(err):
		return ExitNotFound
	}
	return ExitFailure
}

// isCobraUsage recognises the errors cobra returns itself for a command
// line it cannot route (it has no error types for them).
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command ") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") || strings.HasPrefix(msg, "invalid argument ")
}

// usageArgs makes a wrong number of arguments a UsageError.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}
