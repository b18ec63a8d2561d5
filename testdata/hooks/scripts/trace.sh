#!/bin/sh
# The hook of the apply scripts (testdata/script/apply_e2e_*.txtar),
# installed for every class and handler with the hooks command. It
# appends "<event> <id> <group>" to $OBJGC_TEST_STATE/trace once its work
# is done, and obeys files in $OBJGC_TEST_STATE:
#
#   - running/: marks itself running as <group>.<id>.<event> while it
#     runs and appends "OVERLAP ..." to the trace when a hook of another
#     group runs at the same time;
#   - barrier.<group> holding N: a destroy hook of that group waits until
#     N destroy hooks of its group have arrived (at most 10 s, then
#     "BARRIER-TIMEOUT ..."), which proves they run at the same time;
#   - sleep holding seconds: each hook appends "start <event> <id> <group>
#     <pid>" to the trace, then sleeps that long (for a signal to land
#     while it runs, or to be killed);
#   - pids/: each hook writes its pid to pids/<group>.<id>.<event>;
#   - gate: while it exists, each hook waits (after its start line);
#   - gate.<id>.<event>: while it exists, that one hook waits (after its
#     start line): a test holds one chosen hook while the others run;
#   - fail/<id> holding a status: the destroy hook of <id> writes to
#     stderr and exits with that status.
# argv: destroy ID, or notify HANDLER ID (the event is then the handler).
if [ "$1" = notify ]; then ev=$2 id=$3; else ev=$1 id=$2; fi
g=${OBJGC_GROUP:-?}
S=$OBJGC_TEST_STATE
T=$S/trace
[ -d "$S/pids" ] && echo "$$" > "$S/pids/$g.$id.$ev"
if [ -d "$S/running" ]; then
	me=$S/running/$g.$id.$ev
	: > "$me"
	for f in "$S/running"/*; do
		case ${f##*/} in
		"$g".*) ;;
		*) [ -e "$f" ] && echo "OVERLAP $ev $id $g with ${f##*/}" >> "$T" ;;
		esac
	done
fi
if [ "$OBJGC_EVENT" = destroy ] && [ -f "$S/barrier.$g" ]; then
	need=$(cat "$S/barrier.$g")
	mkdir -p "$S/arrived.$g"
	: > "$S/arrived.$g/$id"
	i=0
	while [ "$(ls "$S/arrived.$g" | wc -l)" -lt "$need" ]; do
		i=$((i + 1))
		if [ "$i" -gt 400 ]; then
			echo "BARRIER-TIMEOUT $ev $id $g" >> "$T"
			break
		fi
		sleep 0.025
	done
fi
if [ -f "$S/sleep" ] || [ -e "$S/gate" ] || [ -e "$S/gate.$id.$ev" ]; then
	echo "start $ev $id $g $$" >> "$T"
fi
[ -f "$S/sleep" ] && sleep "$(cat "$S/sleep")"
while [ -e "$S/gate" ] || [ -e "$S/gate.$id.$ev" ]; do sleep 0.01; done
if [ "$OBJGC_EVENT" = destroy ] && [ -f "$S/fail/$id" ]; then
	echo "cannot destroy $id: the cloud said no" >&2
	echo "giving up on $id" >&2
	[ -n "${me:-}" ] && rm -f "$me"
	exit "$(cat "$S/fail/$id")"
fi
echo "$ev $id $g" >> "$T"
[ -n "${me:-}" ] && rm -f "$me"
exit 0
