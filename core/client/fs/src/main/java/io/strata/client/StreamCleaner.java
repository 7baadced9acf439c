package io.strata.client;

import java.lang.ref.Cleaner;

/**
 * The one {@link Cleaner} of this JVM's Strata streams: lets go of what a stream dropped without close (or cancel)
 * still holds, once the collector finds it unreachable: a reader's open block streams ({@link FileInStream}), a
 * writer's lease and streams ({@link OpenWrite}). The state registered must never reach the stream itself, or it
 * never becomes unreachable.
 *
 * <p>Thread-safe. One daemon thread ({@code strata-stream-cleaner}) runs the actions, one at a time.
 */
final class StreamCleaner {
  private static final Cleaner CLEANER = Cleaner.create(r -> {
    Thread t = new Thread(r, "strata-stream-cleaner");
    t.setDaemon(true);
    return t;
  });

  private StreamCleaner() {}

  /** Runs {@code action} once {@code stream} is unreachable, or when the returned handle's clean() is called. */
  static Cleaner.Cleanable register(Object stream, Runnable action) {
    return CLEANER.register(stream, action);
  }
}
