package io.strata.shuffle;

import io.strata.client.FileSystem;
import io.strata.minicluster.LocalStrataCluster;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the shuffle tests that push without Spark share: a started cluster, its client, shuffle channels, a driver's
 * {@link ShuffleLifecycle} (1 MB partition blocks, replicas on) and the pushers' retry pool; {@link #close} stops them
 * all, the cluster last. One per test class.
 */
final class PushRig implements AutoCloseable {
  final LocalStrataCluster cluster;
  final FileSystem fs;
  final ShuffleChannels channels;
  final ShuffleLifecycle lifecycle;
  final ScheduledExecutorService retries;

  PushRig(LocalStrataCluster started, int retryThreads) {
    this.cluster = started;
    this.fs = started.client();
    this.channels = new ShuffleChannels(64 << 20);
    this.lifecycle = new ShuffleLifecycle(fs, channels, new ShuffleLifecycle.Settings(1 << 20, true, 10_000, 8));
    this.retries = Executors.newScheduledThreadPool(retryThreads);
  }

  /** A pusher of shuffle {@code shuffle} of {@code app} to {@code locs}, reviving through the lifecycle. */
  PushClient pusher(String app, int shuffle, List<PartitionLocation> locs, int bufferBytes) {
    return new PushClient(channels, app, shuffle, locs.toArray(new PartitionLocation[0]),
        (failed, bad) -> lifecycle.revive(shuffle, failed.partitionId(), failed.epoch(), bad),
        new PushClient.Settings(4, bufferBytes, 2, 10_000), retries);
  }

  @Override
  public void close() {
    retries.shutdownNow();
    lifecycle.close();
    channels.close();
    cluster.close();
  }
}
