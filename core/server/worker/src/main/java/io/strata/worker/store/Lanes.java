package io.strata.worker.store;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One thread per storage dir for work that unlinks files (block removals): tasks of one dir run one at a time, in
 * order; tasks of different dirs never wait for each other, so an unlink hung on one dying disk holds up that dir's
 * removals only. A lane's thread is made when needed and ends when idle; there are at most as many lanes as keys
 * (dirs, and "" for a block no dir holds any more). Its tasks queue without bound: each caller queues a block once
 * (see its users). Thread-safe.
 */
public final class Lanes {
  private final String name;
  private final Map<String, ThreadPoolExecutor> lanes = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** {@code name} prefixes the lanes' thread names. */
  public Lanes(String name) {
    this.name = name;
  }

  /** Runs {@code task} on the lane of {@code key}; RejectedExecutionException once closed. */
  public void execute(String key, Runnable task) {
    if (closed) {
      throw new RejectedExecutionException(name + " is closed");
    }
    lanes.computeIfAbsent(key, k -> {
      ThreadPoolExecutor lane = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
          r -> {
            Thread t = new Thread(r, name + (k.isEmpty() ? "" : " " + k));
            t.setDaemon(true);
            return t;
          });
      lane.allowCoreThreadTimeOut(true);
      return lane;
    }).execute(task);
  }

  /** Stops every lane: queued tasks are dropped, running ones interrupted. */
  public void close() {
    closed = true;
    lanes.values().forEach(ThreadPoolExecutor::shutdownNow);
  }
}
