#!/bin/sh
# The bundled engine beside this script, whichever build it is.
exec "$(dirname "$0")/arbiter-engine" "$@"
