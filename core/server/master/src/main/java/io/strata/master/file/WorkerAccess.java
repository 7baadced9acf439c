package io.strata.master.file;

import io.strata.common.exception.PermissionDeniedException;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.WorkerState;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which callers may have mount credentials: the worker-facing calls that return a mount's options
 * (GetBlockSource, GetUfsWriteTarget) answer only a live registered worker that shows the random token
 * it got when it registered; heartbeats and block commits naming a live worker must show it too (a reply
 * to a heartbeat carries persist commands with mount options, and its reports change block locations). Worker ids are visible to clients (GetWorkers), tokens are not. This is not
 * authentication (the wire is not encrypted and clients are not authenticated yet): it keeps the
 * credentials from being one unauthenticated call away for any client. Registering is open unless the
 * master asks for {@code strata.security.worker.secret}, which only the cluster's workers then have.
 *
 * <p>Tokens live in memory: a new leader knows none, and workers register again with it. Thread-safe.
 */
final class WorkerAccess {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Map<Long, String> tokens = new ConcurrentHashMap<>();

  /** A new token for {@code workerId} (replacing its last one). */
  String issue(long workerId) {
    return issue(workerId, null);
  }

  /**
   * A new token for {@code workerId}, first forgetting the tokens of workers not in {@code live} (read here, under this
   * object's monitor, as every issue is: a worker whose registration was issued a token concurrently is live by the
   * time this reads the set, so its token is never dropped; only lost or replaced workers' go).
   */
  synchronized String issue(long workerId, java.util.function.Supplier<java.util.Set<Long>> live) {
    if (live != null) {
      java.util.Set<Long> keep = new java.util.HashSet<>(live.get());
      keep.add(workerId);
      tokens.keySet().retainAll(keep);
    }
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    String token = HexFormat.of().formatHex(b);
    tokens.put(workerId, token);
    return token;
  }

  /** Tokens held (tests). */
  int tokenCount() {
    return tokens.size();
  }

  /**
   * Refuses a caller that names a live registered worker without showing its token (a worker this master
   * does not know passes: it is told to register, or its call fails as it would have).
   */
  void checkIfLive(long workerId, String token, BlockMaster blocks, String call) throws PermissionDeniedException {
    for (WorkerState w : blocks.liveWorkers()) {
      if (w.id() == workerId) {
        check(workerId, token, blocks, call);
        return;
      }
    }
  }

  /** Refuses a caller that is not a live registered worker showing its token. */
  void check(long workerId, String token, BlockMaster blocks, String call) throws PermissionDeniedException {
    String expected = tokens.get(workerId);
    boolean live = false;
    for (WorkerState w : blocks.liveWorkers()) {
      if (w.id() == workerId) {
        live = true;
        break;
      }
    }
    if (!live || expected == null || token == null
        || !java.security.MessageDigest.isEqual(expected.getBytes(), token.getBytes())) {
      throw new PermissionDeniedException(call + " answers registered workers only: worker id " + workerId
          + (live ? " did not show its registration token" : " is not a live registered worker"));
    }
  }
}
