package io.strata.worker.rpc;

import java.util.concurrent.atomic.LongAdder;

/**
 * Block bytes the data service streamed over gRPC, by direction and by listener: the TCP data port or the
 * data domain socket (a call's listener is read once, at its start, from
 * {@link io.strata.server.GrpcServer#onDomainSocket}). Thread-safe; one {@link LongAdder} add per chunk.
 */
public final class StreamedBytes {
  private final LongAdder readTcp = new LongAdder();
  private final LongAdder readDomainSocket = new LongAdder();
  private final LongAdder writtenTcp = new LongAdder();
  private final LongAdder writtenDomainSocket = new LongAdder();

  void read(boolean domainSocket, long bytes) {
    (domainSocket ? readDomainSocket : readTcp).add(bytes);
  }

  void written(boolean domainSocket, long bytes) {
    (domainSocket ? writtenDomainSocket : writtenTcp).add(bytes);
  }

  /** Block bytes sent by ReadBlock streams over the domain socket ({@code domainSocket}) or TCP. */
  public long read(boolean domainSocket) {
    return (domainSocket ? readDomainSocket : readTcp).sum();
  }

  /** Block bytes received by WriteBlock streams over the domain socket ({@code domainSocket}) or TCP. */
  public long written(boolean domainSocket) {
    return (domainSocket ? writtenDomainSocket : writtenTcp).sum();
  }
}
