package io.strata.worker.web;

import com.sun.net.httpserver.HttpExchange;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.format.Sizes;
import io.strata.common.format.Times;
import io.strata.common.net.WorkerAddress;
import io.strata.common.Version;
import io.strata.server.web.Html;
import io.strata.server.web.Html.Page;
import io.strata.server.web.TierTotals;
import io.strata.server.web.WebServer;
import io.strata.worker.WorkerProcess;
import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.DirReport;
import io.strata.worker.store.TieredBlockStore;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker's web page ({@code /} on its web port): who it is (address, worker id, registration, uptime),
 * its tiers (capacity and usage of good dirs, reads served per tier), its storage dirs (state, capacity,
 * usage, lost blocks), and its committed blocks (at most {@value #BLOCK_LIMIT} listed, by id). The same
 * numbers its heartbeat reports to the master, read from its own block store (snapshots taken under the
 * store's lock). Read-only; every name escaped by {@link Html}. Thread-safe (no state of its own).
 */
public final class WorkerWebUi {
  static final int BLOCK_LIMIT = 1000;
  private final WorkerProcess worker;
  private final WorkerAddress address;
  private final StrataConf conf;
  private final Clock clock;
  private final long startMs;

  private WorkerWebUi(WorkerProcess worker, WorkerAddress address, StrataConf conf, Clock clock) {
    this.worker = worker;
    this.address = address;
    this.conf = conf;
    this.clock = clock;
    this.startMs = clock.millis();
  }

  /** Serves the worker's page on {@code web}. */
  public static void register(WebServer web, WorkerProcess worker, WorkerAddress address, StrataConf conf,
      Clock clock) {
    WorkerWebUi ui = new WorkerWebUi(worker, address, conf, clock);
    web.route("/", ui::page);
  }

  private void page(HttpExchange ex) throws IOException {
    Page p = new Page("Strata worker " + address).nav("/", "Worker " + address);
    if (!ex.getRequestURI().getPath().equals("/")) {
      Html.send(ex, 404, p.h1("Not found").p("There is no page at ", ex.getRequestURI().getPath(), "."));
      return;
    }
    TieredBlockStore store = worker.tieredStore();
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("Version", Version.VERSION);
    summary.put("Address", address.toString());
    summary.put("Worker id", worker.isRegistered() ? Long.toString(worker.workerId()) : "(not registered)");
    summary.put("Master", conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS)
        ? "the leader elected through ZooKeeper at " + conf.get(CommonKeys.ZOOKEEPER_ADDRESS)
        : conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT));
    summary.put("Started", Times.iso(startMs));
    summary.put("Uptime", Times.duration(clock.millis() - startMs));
    if (store == null) {
      Html.send(ex, 200, p.h1("Worker " + address).keyValues("summary", summary).p("The block store is starting."));
      return;
    }
    summary.put("Capacity", Sizes.bytesAndHuman(store.capacityBytes()));
    summary.put("Used", Sizes.bytesAndHuman(store.usedBytes()));
    List<BlockMeta> blocks = new ArrayList<>(store.committedBlocks());
    summary.put("Blocks", blocks.size());
    p.h1("Worker " + address).keyValues("summary", summary);
    List<DirReport> dirs = store.dirReports();
    p.h2("Tiers").table("tiers", List.of("Tier", "Capacity", "Used", "Dirs", "Bad dirs", "Reads"), tierRows(store, dirs));
    List<List<?>> dirRows = new ArrayList<>();
    for (DirReport d : dirs) {
      dirRows.add(List.of(d.tier(), d.path(), d.good() ? Html.span("ok", "OK") : Html.span("bad", "BAD"),
          Sizes.bytesAndHuman(d.capacityBytes()), Sizes.bytesAndHuman(d.usedBytes()), d.lostBlocks()));
    }
    p.h2("Storage dirs").table("dirs", List.of("Tier", "Path", "State", "Capacity", "Used", "Lost blocks"), dirRows);
    blocks.sort(Comparator.comparingLong(BlockMeta::blockId));
    List<List<?>> blockRows = new ArrayList<>();
    for (BlockMeta b : blocks.subList(0, Math.min(BLOCK_LIMIT, blocks.size()))) {
      blockRows.add(List.of(b.blockId(), b.length(), b.tier()));
    }
    p.h2("Blocks");
    if (blocks.size() > BLOCK_LIMIT) {
      p.p("The first " + BLOCK_LIMIT + " of " + blocks.size() + " blocks, by id.");
    }
    Html.send(ex, 200, p.table("blocks", List.of("Block", "Length", "Tier"), blockRows));
  }

  private static List<List<?>> tierRows(TieredBlockStore store, List<DirReport> dirs) {
    TierTotals totals = new TierTotals();
    for (DirReport d : dirs) {
      totals.add(d.tierOrdinal(), d.tier(), d.good(), d.capacityBytes(), d.usedBytes());
    }
    long[] reads = store.readsByTier();
    List<List<?>> rows = new ArrayList<>();
    for (TierTotals.Tier t : totals.tiers()) {
      rows.add(List.of(t.alias(), Sizes.bytesAndHuman(t.capacityBytes()), Sizes.bytesAndHuman(t.usedBytes()),
          t.dirs(), t.badDirs() > 0 ? Html.span("bad", t.badDirs()) : 0,
          t.ordinal() < reads.length ? reads[t.ordinal()] : 0));
    }
    return rows;
  }
}
