package io.strata.client;

import java.lang.ref.Cleaner;

/**
 * The one {@link Cleaner} of this JVM's Strata streams: lets go of what a stream dropped without close (or cancel)
 * still holds, once the collector finds it unreachable: a reader's open block streams ({@link FileInStream}), a
 * writer's lease and streams ({@link OpenWrite}). The state registered must never reach the stream itself, or it
 * never becomes unreachable.
 *
 * <p>Thread-safe. One daemon thread ({@code strata-stream-cleaner}) runs the actions, one at a time; an action that
 * waits on the network (a stream's cancel may wait for its worker's answer, up to the RPC timeout) hands that part to
 * {@link #later}, so one worker that does not answer never holds up the other streams' clean-ups.
 */
final class StreamCleaner {
  private static final Cleaner CLEANER = Cleaner.create(r -> {
    Thread t = new Thread(r, "strata-stream-cleaner");
    t.setDaemon(true);
    return t;
  });

  /** Up to four daemon threads, made when needed and gone when idle, for the parts of actions that may wait. */
  private static final java.util.concurrent.ThreadPoolExecutor LATER = later();

  private static java.util.concurrent.ThreadPoolExecutor later() {
    java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(4, 4, 30,
        java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "strata-stream-cleanups");
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  private StreamCleaner() {}

  /** Runs the part of a clean-up that may wait on the network off the cleaner's thread. */
  static void later(Runnable waits) {
    LATER.execute(waits);
  }

  /** Runs {@code action} once {@code stream} is unreachable, or when the returned handle's clean() is called. */
  static Cleaner.Cleanable register(Object stream, Runnable action) {
    return CLEANER.register(stream, action);
  }
}
