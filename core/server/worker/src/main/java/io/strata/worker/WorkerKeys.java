package io.strata.worker;

import io.strata.common.conf.PropertyKey;
import java.time.Duration;
import java.util.List;

/** Keys the worker reads. */
public final class WorkerKeys {
  private WorkerKeys() {}

  public static final PropertyKey<String> HOSTNAME = PropertyKey.stringKey("strata.worker.hostname")
      .defaultValue("localhost")
      .doc("Host name the worker advertises to the master and clients.")
      .build();

  public static final PropertyKey<String> BIND_HOST = PropertyKey.stringKey("strata.worker.bind.host")
      .defaultValue("127.0.0.1")
      .doc("Address the worker's data server binds to. Loopback by default.")
      .build();

  public static final PropertyKey<Integer> RPC_PORT = PropertyKey.intKey("strata.worker.rpc.port")
      .defaultValue(29999)
      .validate(p -> p >= 0 && p <= 65535, "a port number between 0 and 65535")
      .doc("The worker's gRPC data port (0 picks a free port).")
      .build();

  public static final PropertyKey<String> TIER0_ALIAS = PropertyKey.stringKey("strata.worker.tier.0.alias")
      .defaultValue("MEM")
      .doc("Name of the worker's top (and for now only) storage tier.")
      .build();

  public static final PropertyKey<List<String>> TIER0_DIRS = PropertyKey.listKey("strata.worker.tier.0.dirs")
      .defaultValue("/dev/shm/strata-worker-${strata.worker.rpc.port}")
      .doc("Directory of the top tier's blocks (one directory for now; a tmpfs for MEM). "
          + "${strata.worker.rpc.port} is replaced by the worker's port so several workers can share a host.")
      .build();

  public static final PropertyKey<Long> TIER0_QUOTA = PropertyKey.bytesKey("strata.worker.tier.0.quota")
      .defaultValue("2GB")
      .validate(v -> v > 0, "positive")
      .doc("Bytes the top tier may hold; writes beyond it fail with RESOURCE_EXHAUSTED.")
      .build();

  public static final PropertyKey<Duration> HEARTBEAT_INTERVAL =
      PropertyKey.durationKey("strata.worker.heartbeat.interval")
          .defaultValue("1s")
          .validate(d -> d.toMillis() >= 10, "at least 10ms")
          .doc("How often the worker heartbeats to the master (and retries registration while it cannot).")
          .build();

  public static final PropertyKey<Long> READ_CHUNK_SIZE_MAX = PropertyKey.bytesKey("strata.worker.read.chunk.size.max")
      .defaultValue("4MB")
      .doc("Largest chunk the worker sends in a block read, whatever the client asks for.")
      .build();
}
