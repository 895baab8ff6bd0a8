#!/bin/bash
# Instructions (callgrind, user space) from exec to the first /readyz 200.
# Usage: cg.sh NAME BINARY DATA_DIR SHARDS
name=$1; bin=$2; src=$3; shards=$4
d=/tmp/restart-bench/cg-data-$name; rm -rf $d; cp -a $src $d
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -f /tmp/restart-bench/cg-$name.out*
valgrind --tool=callgrind --callgrind-out-file=/tmp/restart-bench/cg-$name.out $bin serve --listen 127.0.0.1:$port --data-dir $d --shards $shards > /tmp/restart-bench/cg-$name.log 2>&1 &
vpid=$!
until curl -sf -o /dev/null --max-time 5 127.0.0.1:$port/readyz; do sleep 0.05; done
callgrind_control -d $vpid > /dev/null
sleep 2
kill -9 $vpid; wait $vpid 2>/dev/null
echo "== $name: $(callgrind_annotate /tmp/restart-bench/cg-$name.out.1 2>/dev/null | grep 'PROGRAM TOTALS')"
grep -E "recovered|load phases" /tmp/restart-bench/cg-$name.log | sed 's/shardline: //'
rm -rf $d
