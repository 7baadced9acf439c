package io.strata.client;

import io.strata.common.conf.PropertyKey;
import java.time.Duration;

/** Keys the client reads. Declared here, next to the code that owns them. */
public final class ClientKeys {
  private ClientKeys() {}

  public static final PropertyKey<Long> BLOCK_SIZE_DEFAULT = PropertyKey.bytesKey("strata.user.block.size.default")
      .defaultValue("64MB")
      .validate(v -> v > 0, "positive")
      .doc("Block size of new files unless the create call sets one.")
      .build();

  public static final PropertyKey<Long> STREAM_CHUNK_SIZE = PropertyKey.bytesKey("strata.user.stream.chunk.size")
      .defaultValue("1MB")
      .validate(v -> v >= 1024 && v <= 4L * 1024 * 1024, "between 1KB and 4MB")
      .doc("Bytes per message when streaming block data to and from workers.")
      .build();

  public static final PropertyKey<Integer> READ_PREFETCH_CHUNKS = PropertyKey.intKey("strata.user.read.prefetch.chunks")
      .defaultValue(4)
      .validate(v -> v >= 1 && v <= 64, "between 1 and 64")
      .doc("Chunks a block reader asks a worker for ahead of the one being consumed (flow control window).")
      .build();

  public static final PropertyKey<String> WRITE_LOCATION_POLICY =
      PropertyKey.stringKey("strata.user.block.write.location.policy")
          .defaultValue("LOCAL_FIRST")
          .validate(v -> v.equals("LOCAL_FIRST") || v.equals("ROUND_ROBIN") || v.equals("MOST_AVAILABLE_FIRST"),
              "one of LOCAL_FIRST, ROUND_ROBIN, MOST_AVAILABLE_FIRST")
          .doc("Which worker receives a new block: LOCAL_FIRST (a worker on this host, round robin among "
              + "them, else any), ROUND_ROBIN (every worker in turn), MOST_AVAILABLE_FIRST (most free space).")
          .build();

  public static final PropertyKey<String> HOSTNAME = PropertyKey.stringKey("strata.user.hostname")
      .defaultValue("localhost")
      .doc("This client's host name, compared with worker host names to find local workers.")
      .build();

  public static final PropertyKey<Duration> WORKER_LIST_REFRESH =
      PropertyKey.durationKey("strata.user.worker.list.refresh.interval")
          .defaultValue("10s")
          .doc("How long the client reuses the master's worker list before asking again.")
          .build();

  public static final PropertyKey<Integer> LIST_BATCH_SIZE = PropertyKey.intKey("strata.user.list.batch.size")
      .defaultValue(1000)
      .validate(v -> v >= 1 && v <= 100_000, "between 1 and 100000")
      .doc("Entries per streamed batch of a listStatus call.")
      .build();
}
