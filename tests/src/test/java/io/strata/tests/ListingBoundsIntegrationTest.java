package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master runs at most {@code strata.master.listing.threads.max} streamed listings at once (each holds a
 * thread while its client is slow to take the batches): here one, held by a client that takes one message
 * and stops reading; the next streamed listing is refused with RESOURCE_EXHAUSTED naming the key, a small
 * listing already merged with the under file system (answered from memory, without a thread) still works, and once the slow client goes away listings run again.
 */
class ListingBoundsIntegrationTest {
  private static final int ENTRIES = 2500;

  @TempDir
  static Path tmp;
  private static LocalStrataCluster cluster;
  /** How long a listing may wait for a client that reads nothing: long enough for the first test's checks. */
  private static final String STALL = "15s";
  private static FileSystem fs;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster"))
        .set("strata.master.listing.threads.max", "1").set("strata.master.listing.stall.timeout", STALL)
        .build().start();
    fs = cluster.client();
    String longName = "d".repeat(200);
    CreateDirectoryOptions mustCache = CreateDirectoryOptions.defaults().withRecursive(true)
        .withWriteType(WriteType.MUST_CACHE);
    fs.createDirectory("/big", mustCache);
    // Eight at a time: the journal commits them in groups.
    java.util.concurrent.ExecutorService creators = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      for (int i = 0; i < ENTRIES; i++) {
        String dir = "/big/" + longName + i;
        done.add(creators.submit(() -> {
          fs.createDirectory(dir, mustCache);
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : done) {
        f.get();
      }
    } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
      throw new IOException(e);
    } finally {
      creators.shutdownNow();
    }
    fs.createDirectory("/small/one", mustCache);
    // Listed once, so its under file system listing is merged: later small listings answer from memory.
    fs.listStatus("/small");
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Starts a listing of /big in batches of 10 that takes one message and reads no more (manual flow control: the
   * master fills the window and then waits for this client); counts what arrives in {@code received}.
   */
  private static ClientCallStreamObserver<?> stalledListing(ManagedChannel ch, AtomicInteger received) {
    ClientCallStreamObserver<?>[] call = new ClientCallStreamObserver<?>[1];
    FileSystemMasterServiceGrpc.newStub(ch).listStatus(
        ListStatusRequest.newBuilder().setPath("/big").setBatchSize(10).build(),
        new ClientResponseObserver<ListStatusRequest, ListStatusResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<ListStatusRequest> requestStream) {
            call[0] = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
          }

          @Override
          public void onNext(ListStatusResponse value) {
            received.incrementAndGet();
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    return call[0];
  }

  /** A client that never reads again: the master ends its listing after the stall timeout and frees the slot. */
  @Test
  void aListingWhoseClientStopsReading_isEndedAfterTheStallTimeout_andItsSlotFreed() throws Exception {
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.master().listingsRunning() == 0);
    ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", cluster.masterPort()).usePlaintext()
        .flowControlWindow(64 * 1024).build();
    AtomicInteger received = new AtomicInteger();
    try {
      stalledListing(ch, received);
      await().atMost(Duration.ofSeconds(10)).until(() -> received.get() == 1);
      assertThat(cluster.master().listingsRunning()).isEqualTo(1);
      // Never cancelled, never read: the master ends it itself.
      await().atMost(Duration.ofSeconds(60)).until(() -> cluster.master().listingsRunning() == 0);
      assertThat(fs.listStatus("/big")).hasSize(ENTRIES);
    } finally {
      ch.shutdownNow();
    }
  }

  @Test
  void aStreamedListingPastTheBound_isRefused_untilTheSlowOneEnds() throws Exception {
    // A small window and manual flow control: the master fills the window with batches of 10 and then
    // waits for this client, which took one message and reads no more.
    ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", cluster.masterPort()).usePlaintext()
        .flowControlWindow(64 * 1024).build();
    AtomicInteger received = new AtomicInteger();
    ClientCallStreamObserver<?>[] call = new ClientCallStreamObserver<?>[1];
    try {
      call[0] = stalledListing(ch, received);
      await().atMost(Duration.ofSeconds(10)).until(() -> received.get() == 1);
      assertThat(cluster.master().listingsRunning()).isEqualTo(1);

      assertThatThrownBy(() -> fs.listStatus("/big")).isInstanceOf(ResourceExhaustedException.class)
          .hasMessageContaining("strata.master.listing.threads.max=1");
      List<URIStatus> small = fs.listStatus("/small");
      assertThat(small).extracting(URIStatus::name).containsExactly("one");
    } finally {
      call[0].cancel("done", null);
      ch.shutdownNow();
    }
    // The cancelled listing gives its thread back (it wakes on the cancel).
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master().listingsRunning() == 0);
    assertThat(fs.listStatus("/big")).hasSize(ENTRIES);
  }
}
