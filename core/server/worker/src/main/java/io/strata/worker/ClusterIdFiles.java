package io.strata.worker;

import io.strata.common.exception.FailedPreconditionException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster a worker's stored blocks belong to: the id the master answered when the worker joined, kept as
 * {@code CLUSTER_ID} at the root of each storage dir, next to the blocks it vouches for. A worker registers with it,
 * and a master of another cluster (its journal formatted since: block ids start again, so an old block would pass
 * for a new file's) refuses the worker, as HDFS's NameNode refuses a DataNode of another cluster ID.
 *
 * <p>A dir without the file (new, wiped, a memory tier after a reboot, or written before cluster ids existed) takes
 * the id of the cluster the worker joins. Dirs that name different clusters make the worker refuse to register.
 *
 * <p>Called from the worker's master-sync thread only; file I/O, no locks.
 */
final class ClusterIdFiles {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterIdFiles.class);
  static final String FILE = "CLUSTER_ID";

  /** The roots of the worker's usable storage dirs. */
  private final Supplier<List<Path>> dirs;

  ClusterIdFiles(Supplier<List<Path>> dirs) {
    this.dirs = dirs;
  }

  /** The cluster the stored blocks belong to; "" when no dir names one. Throws when dirs name different ones. */
  String known() throws FailedPreconditionException {
    Map<String, Path> seen = new TreeMap<>();
    for (Path d : dirs.get()) {
      Path f = d.resolve(FILE);
      try {
        if (Files.exists(f)) {
          String id = Files.readString(f, StandardCharsets.UTF_8).trim();
          if (!id.isEmpty()) {
            seen.putIfAbsent(id, d);
          }
        }
      } catch (IOException e) {
        LOG.warn("Cannot read {}: {}", f, e.toString()); // a failing dir: the store takes it out
      }
    }
    if (seen.size() > 1) {
      throw new FailedPreconditionException("This worker's storage dirs hold blocks of different clusters " + seen
          + ": empty the dirs of the cluster this worker does not belong to");
    }
    return seen.isEmpty() ? "" : seen.keySet().iterator().next();
  }

  /** Records {@code clusterId} in every dir that names none yet (written whole: temp file, sync, rename). */
  void joined(String clusterId) {
    if (clusterId.isEmpty()) {
      return;
    }
    for (Path d : dirs.get()) {
      Path f = d.resolve(FILE);
      if (Files.exists(f)) {
        continue;
      }
      try {
        Path tmp = d.resolve(FILE + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
          ch.write(ByteBuffer.wrap((clusterId + "\n").getBytes(StandardCharsets.UTF_8)));
          ch.force(true);
        }
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        LOG.warn("Cannot record the cluster id in {}: {} (the next registration tries again)", d, e.toString());
      }
    }
  }
}
