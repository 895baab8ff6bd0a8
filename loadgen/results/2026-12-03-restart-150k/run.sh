#!/bin/bash
# One timed comparison: each binary on its own copy of the same data dir.
# Usage: run.sh TAG  (binaries /tmp/restart-bench/shardline-before and shardline-after)
set -e
cd /work/wt-restart
tag=$1
for shards in 1 2; do
  for who in before after; do
    d=/tmp/restart-bench/d-$tag-$who-$shards
    rm -rf $d; cp -a /tmp/restart-bench/data-150k $d
    echo "=== $who, --shards $shards"
    python3 benches/system/restart.py --binary /tmp/restart-bench/shardline-$who --pods 150000 --shards $shards \
      --restarts 3 --data-dir $d --baseline-rss-mib $(eval echo \$BASELINE_$who)
    rm -rf $d
  done
done
