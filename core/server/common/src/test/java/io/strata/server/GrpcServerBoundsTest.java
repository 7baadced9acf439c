package io.strata.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.strata.common.exception.ErrorCode;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.GrpcErrors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A saturated server answers RESOURCE_EXHAUSTED instead of growing threads (issue 9, point 6). The
 * server is the real {@link GrpcServer} over loopback with its real executor; the service is one unary
 * method whose handler waits on a latch, so the test decides exactly when its threads are busy.
 */
class GrpcServerBoundsTest {
  private static final MethodDescriptor<byte[], byte[]> WAIT = io.strata.common.grpc.BytesMethods.unary(
      "test.Blocking", "Wait");

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void saturatedServer_refusesWithResourceExhausted_andNeverRunsMoreThanItsThreads() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    CountDownLatch twoRunning = new CountDownLatch(2);
    ServerServiceDefinition service = ServerServiceDefinition.builder("test.Blocking")
        .addMethod(WAIT, ServerCalls.asyncUnaryCall((req, out) -> {
          maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
          twoRunning.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          running.decrementAndGet();
          out.onNext(req);
          out.onCompleted();
        })).build();
    GrpcServer.Limits limits = limits(2, 4);
    GrpcServer server = new GrpcServer("bounded", "127.0.0.1", 0, 1 << 20, limits, List.of(service)).start();
    ManagedChannel ch = GrpcChannels.forAddress("127.0.0.1", server.port(), 1 << 20);
    ExecutorService clients = Executors.newFixedThreadPool(12);
    try {
      List<Future<byte[]>> calls = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        byte[] req = {(byte) i};
        calls.add(clients.submit(() -> ClientCalls.blockingUnaryCall(ch, WAIT, CallOptions.DEFAULT, req)));
      }
      assertThat(twoRunning.await(20, TimeUnit.SECONDS)).isTrue(); // both threads are now held
      List<Future<byte[]>> more = new ArrayList<>();
      for (int i = 2; i < 12; i++) {
        byte[] req = {(byte) i};
        more.add(clients.submit(() -> ClientCalls.blockingUnaryCall(ch, WAIT, CallOptions.DEFAULT, req)));
      }
      // With both threads held and room for four waiting tasks (each call has at most one task waiting, so
      // at most four calls wait), the others are refused at once (at the first callback the pool cannot
      // take), without a thread more.
      await().atMost(Duration.ofSeconds(20)).until(() -> server.refusedCalls() >= 6);
      assertThat(serverThreads()).as("handler threads").isLessThanOrEqualTo(2);
      release.countDown();
      int refused = 0;
      for (Future<byte[]> f : more) {
        try {
          assertThat(f.get(20, TimeUnit.SECONDS)).hasSize(1);
        } catch (java.util.concurrent.ExecutionException e) {
          StatusRuntimeException s = (StatusRuntimeException) e.getCause();
          assertThat(s.getStatus().getCode()).as(s.getStatus().toString()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
          assertThat(GrpcErrors.fromThrowable(s).code()).isEqualTo(ErrorCode.RESOURCE_EXHAUSTED);
          assertThat(s.getStatus().getDescription()).contains("strata.server.rpc.threads")
              .contains("strata.server.rpc.queue.max");
          refused++;
        }
      }
      assertThat(refused).as("refused of 10 while saturated").isGreaterThanOrEqualTo(6);
      assertThat(server.refusedCalls()).isEqualTo(refused);
      for (Future<byte[]> f : calls) {
        assertThat(f.get(20, TimeUnit.SECONDS)).hasSize(1); // the two that held the threads finish
      }
      assertThat(maxRunning.get()).isEqualTo(2);
      // once the burst is over, the server serves again
      assertThat(ClientCalls.blockingUnaryCall(ch, WAIT, CallOptions.DEFAULT, new byte[] {42})).containsExactly(42);
    } finally {
      release.countDown();
      clients.shutdownNow();
      GrpcChannels.close(ch);
      server.close();
    }
  }

  /**
   * A stream whose handler started and which is refused mid-way (its next message finds every thread busy and
   * the queue full) ends for its handler as a cancel, and the refused message, parsed over the transport's
   * buffers by the zero-copy marshaller of block writes, is released: a block write refused so lets go of its
   * temp block and leaks no transport memory.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aStreamRefusedMidWay_endsForItsHandler_andReleasesTheMessageItDropped() throws Exception {
    io.strata.common.grpc.BlockDataMarshalling marshalling = new io.strata.common.grpc.BlockDataMarshalling();
    MethodDescriptor<io.strata.proto.WriteBlockRequest, io.strata.proto.WriteBlockResponse> collect =
        marshalling.writeBlock().toBuilder().setFullMethodName("test.Blocking/Collect").build();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch firstSeen = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    ServerServiceDefinition service = ServerServiceDefinition.builder("test.Blocking")
        .addMethod(collect, ServerCalls.asyncClientStreamingCall(out -> new io.grpc.stub.StreamObserver<>() {
          @Override
          public void onNext(io.strata.proto.WriteBlockRequest req) {
            seen.add("message of " + req.getChunk().size());
            marshalling.writeRequests().release(req);
            firstSeen.countDown();
          }

          @Override
          public void onError(Throwable t) {
            seen.add("error " + Status.fromThrowable(t).getCode());
            ended.countDown();
          }

          @Override
          public void onCompleted() {
            seen.add("completed");
            ended.countDown();
          }
        })).build();
    GrpcServer.Limits limits = limits(1, 1);
    GrpcServer server = new GrpcServer("refusing", "127.0.0.1", 0, 1 << 20, limits, List.of(service)).start();
    ManagedChannel ch = GrpcChannels.forAddress("127.0.0.1", server.port(), 1 << 20);
    try {
      io.grpc.stub.StreamObserver<io.strata.proto.WriteBlockRequest>[] stream = new io.grpc.stub.StreamObserver[1];
      java.util.concurrent.CompletableFuture<Status> clientSaw = new java.util.concurrent.CompletableFuture<>();
      stream[0] = ClientCalls.asyncClientStreamingCall(ch.newCall(collect, CallOptions.DEFAULT),
          new io.grpc.stub.StreamObserver<io.strata.proto.WriteBlockResponse>() {
            @Override
            public void onNext(io.strata.proto.WriteBlockResponse value) {}

            @Override
            public void onError(Throwable t) {
              clientSaw.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
              clientSaw.complete(Status.OK);
            }
          });
      byte[] chunk = new byte[64 << 10];
      stream[0].onNext(io.strata.proto.WriteBlockRequest.newBuilder()
          .setChunk(com.google.protobuf.ByteString.copyFrom(chunk)).build());
      assertThat(firstSeen.await(20, TimeUnit.SECONDS)).isTrue();
      // The only thread held, the one queue slot taken: the stream's next message has no room.
      CountDownLatch queuedRan = new CountDownLatch(1);
      server.handOff(() -> {
        holding.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, e -> seen.add("hold refused"));
      assertThat(holding.await(20, TimeUnit.SECONDS)).isTrue();
      server.handOff(queuedRan::countDown, e -> seen.add("queued refused"));
      assertThat(server.queuedTasks()).isEqualTo(1);
      stream[0].onNext(io.strata.proto.WriteBlockRequest.newBuilder()
          .setChunk(com.google.protobuf.ByteString.copyFrom(chunk)).build());
      assertThat(clientSaw.get(20, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(ended.await(20, TimeUnit.SECONDS)).as("the handler heard the stream end").isTrue();
      assertThat(seen).containsExactly("message of 65536", "error CANCELLED");
      assertThat(marshalling.writeRequests().aliasedParses()).as("parsed over the transport's buffers").isEqualTo(2);
      assertThat(marshalling.writeRequests().outstanding()).as("transport memory still held").isZero();
      assertThat(server.refusedCalls()).isEqualTo(1);
      release.countDown();
      assertThat(queuedRan.await(20, TimeUnit.SECONDS)).isTrue();
    } finally {
      release.countDown();
      GrpcChannels.close(ch);
      server.close();
    }
  }

  @Test
  void aServerThatCannotListen_saysWhyInTheUsersTerms() throws Exception {
    GrpcServer.Limits limits = limits(1, 1);
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      GrpcServer server = new GrpcServer("worker", "127.0.0.1", port, 1 << 20, limits, List.of());
      java.io.IOException e = org.assertj.core.api.Assertions.catchThrowableOfType(java.io.IOException.class,
          server::start);
      assertThat(GrpcServer.cannotListen("worker", "127.0.0.1", port, "strata.worker.bind.host",
          "strata.worker.rpc.port", e)).hasMessage("The worker cannot listen on 127.0.0.1:" + port
          + ": the port is in use (is another worker or bin/strata-start.sh local running? strata.worker.rpc.port "
          + "sets the port, strata.worker.bind.host the host)");
    }
    GrpcServer unresolved = new GrpcServer("master", "nosuchhost.invalid", 0, 1 << 20, limits, List.of());
    java.io.IOException e = org.assertj.core.api.Assertions.catchThrowableOfType(java.io.IOException.class,
        unresolved::start);
    assertThat(GrpcServer.cannotListen("master", "nosuchhost.invalid", 0, "strata.master.bind.host",
        "strata.master.rpc.port", e)).hasMessage("The master cannot listen: its bind host 'nosuchhost.invalid' "
        + "(strata.master.bind.host) does not resolve to an address of this machine");
  }

  /** A server's limits with {@code threads} handler threads and {@code queue} tasks waiting for them. */
  private static GrpcServer.Limits limits(int threads, int queue) {
    return new GrpcServer.Limits(threads, queue, 100, Duration.ofMinutes(1), Duration.ofSeconds(20),
        Duration.ofSeconds(10), Duration.ofMinutes(30));
  }

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    return WAIT.toBuilder().setFullMethodName("test.Blocking/" + name).build();
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void inlineMethods_answerOnTheTransportThread_whileEveryHandlerThreadIsHeld_andHandOffsRefuseWhenSaturated()
      throws Exception {
    MethodDescriptor<byte[], byte[]> now = method("Now");
    MethodDescriptor<byte[], byte[]> handOff = method("HandOff");
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch holding = new CountDownLatch(1);
    List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    GrpcServer[] server = {null};
    ServerServiceDefinition service = ServerServiceDefinition.builder("test.Blocking")
        .addMethod(WAIT, ServerCalls.asyncUnaryCall((req, out) -> {
          threads.add("Wait " + Thread.currentThread().getName());
          holding.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          out.onNext(req);
          out.onCompleted();
        }))
        .addMethod(now, ServerCalls.asyncUnaryCall((req, out) -> {
          threads.add("Now " + Thread.currentThread().getName());
          out.onNext(req);
          out.onCompleted();
        }))
        .addMethod(handOff, ServerCalls.asyncUnaryCall((req, out) -> server[0].handOff(() -> {
          out.onNext(req);
          out.onCompleted();
        }, out::onError))).build();
    GrpcServer.Limits limits = limits(1, 1);
    server[0] = new GrpcServer("inline", "127.0.0.1", 0, 1 << 20, limits, List.of(service),
        java.util.Set.of(now.getFullMethodName(), handOff.getFullMethodName())).start();
    ManagedChannel ch = GrpcChannels.forAddress("127.0.0.1", server[0].port(), 1 << 20);
    ExecutorService clients = Executors.newFixedThreadPool(2);
    try {
      Future<byte[]> held = clients.submit(() -> ClientCalls.blockingUnaryCall(ch, WAIT, CallOptions.DEFAULT,
          new byte[] {1}));
      assertThat(holding.await(20, TimeUnit.SECONDS)).isTrue(); // the only handler thread is held
      // An inline method is answered all the same, on a transport thread.
      assertThat(ClientCalls.blockingUnaryCall(ch, now, CallOptions.DEFAULT, new byte[] {2})).containsExactly(2);
      // A hand-off takes the one queue slot; the next finds the pool saturated and is refused at once.
      Future<byte[]> queued = clients.submit(() -> ClientCalls.blockingUnaryCall(ch, handOff, CallOptions.DEFAULT,
          new byte[] {3}));
      await().atMost(Duration.ofSeconds(20)).until(() -> server[0].queuedTasks() == 1);
      StatusRuntimeException refused = org.assertj.core.api.Assertions.catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(ch, handOff, CallOptions.DEFAULT, new byte[] {4}));
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(server[0].refusedCalls()).isEqualTo(1);
      release.countDown();
      assertThat(held.get(20, TimeUnit.SECONDS)).containsExactly(1);
      assertThat(queued.get(20, TimeUnit.SECONDS)).containsExactly(3);
      assertThat(threads).hasSize(2);
      assertThat(threads.get(0)).startsWith("Wait inline-rpc-");
      assertThat(threads.get(1)).startsWith("Now ").doesNotContain("-rpc-");
    } finally {
      release.countDown();
      clients.shutdownNow();
      GrpcChannels.close(ch);
      server[0].close();
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aUnaryCallOnAServerWithInlineMethods_costsOneHandOff_andItsCompletionRunsAfterItsHandler() throws Exception {
    MethodDescriptor<byte[], byte[]> echo = method("Echo");
    MethodDescriptor<byte[], byte[]> now = method("Now");
    java.util.concurrent.atomic.AtomicBoolean handling = new java.util.concurrent.atomic.AtomicBoolean();
    AtomicInteger handled = new AtomicInteger();
    AtomicInteger completed = new AtomicInteger();
    AtomicInteger completedOnPool = new AtomicInteger();
    AtomicInteger overlapped = new AtomicInteger();
    ServerServiceDefinition service = ServerServiceDefinition.builder("test.Blocking")
        .addMethod(echo, ServerCalls.asyncUnaryCall((req, out) -> {
          handling.set(true);
          ((io.grpc.stub.ServerCallStreamObserver<byte[]>) out).setOnCloseHandler(() -> {
            if (handling.get()) {
              overlapped.incrementAndGet();
            }
            if (Thread.currentThread().getName().startsWith("once-rpc-")) {
              completedOnPool.incrementAndGet();
            }
            completed.incrementAndGet();
          });
          handled.incrementAndGet();
          out.onNext(req);
          out.onCompleted();
          handling.set(false);
        }))
        .addMethod(now, ServerCalls.asyncUnaryCall((req, out) -> {
          out.onNext(req);
          out.onCompleted();
        })).build();
    GrpcServer server = new GrpcServer("once", "127.0.0.1", 0, 1 << 20, GrpcServer.Limits.DEFAULTS, List.of(service),
        java.util.Set.of(now.getFullMethodName())).start();
    ManagedChannel ch = GrpcChannels.forAddress("127.0.0.1", server.port(), 1 << 20);
    try {
      int calls = 50;
      for (int i = 0; i < calls; i++) {
        assertThat(ClientCalls.blockingUnaryCall(ch, echo, CallOptions.DEFAULT, new byte[] {(byte) i}))
            .containsExactly((byte) i);
      }
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(completed).hasValue(calls));
      // The message and readiness wait for the half-close: one pool task per call. A completion runs on the
      // transport thread when nothing of its call is on the pool; else it is queued, and the pool runs it in the
      // handler's task or as one more task after it.
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(server.tasksRun())
          .isBetween((long) calls, (long) calls + completedOnPool.get()));
      assertThat(handled).hasValue(calls);
      assertThat(overlapped).hasValue(0);
      assertThat(completedOnPool.get()).isLessThan(calls);
    } finally {
      GrpcChannels.close(ch);
      server.close();
    }
  }

  private static long serverThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("bounded-rpc-") && !t.getName().startsWith("bounded-rpc-refuse")).count();
  }
}
