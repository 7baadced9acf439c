package io.strata.master.file;

import io.strata.server.ufs.UfsManager;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * What the file system master needs to use under file systems: the clients, the root mount (from the
 * configuration, never journaled), how local paths resolve, the block size of files loaded from a UFS,
 * the persist scheduler's timing and concurrency, and the UFS URIs nested mounts may name (empty: any). Immutable.
 */
public record UfsConfig(UfsManager manager, MountTable.MountInfo rootMount, Path home, long blockSize,
    Duration persistRetryMin, Duration persistRetryMax, Duration persistTimeout, Duration mountCheckTimeout,
    List<String> allowedMountUris, int persistMaxInFlight) {
  public UfsConfig {
    allowedMountUris = List.copyOf(allowedMountUris);
  }
}
