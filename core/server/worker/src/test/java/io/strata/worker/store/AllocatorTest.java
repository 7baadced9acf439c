package io.strata.worker.store;

import static io.strata.worker.store.FakeDir.free;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Allocator#create}: built-in short names and allocators loaded by class name. */
class AllocatorTest {
  /** Always the last dir; loadable by name. */
  public static final class LastDirAllocator implements Allocator {
    public LastDirAllocator() {}

    @Override
    public DirView allocate(List<? extends DirView> dirs, long bytes) {
      return dirs.isEmpty() ? null : dirs.get(dirs.size() - 1);
    }
  }

  public static final class NeedsArgumentAllocator implements Allocator {
    public NeedsArgumentAllocator(int unused) {}

    @Override
    public DirView allocate(List<? extends DirView> dirs, long bytes) {
      return null;
    }
  }

  public static final class FailingAllocator implements Allocator {
    public FailingAllocator() {
      throw new IllegalStateException("boom in constructor");
    }

    @Override
    public DirView allocate(List<? extends DirView> dirs, long bytes) {
      return null;
    }
  }

  public abstract static class AbstractAllocator implements Allocator {}

  @Test
  void create_mapsShortNames_toTheBuiltInAllocators() {
    assertThat(Allocator.create("MaxFree")).isInstanceOf(MaxFreeAllocator.class);
    assertThat(Allocator.create("RoundRobin")).isInstanceOf(RoundRobinAllocator.class);
    assertThat(Allocator.create("Greedy")).isInstanceOf(GreedyAllocator.class);
  }

  @Test
  void create_acceptsShortNames_inAnyCase_withSurroundingSpace() {
    assertThat(Allocator.create(" maxfree ")).isInstanceOf(MaxFreeAllocator.class);
    assertThat(Allocator.create("ROUNDROBIN")).isInstanceOf(RoundRobinAllocator.class);
  }

  @Test
  void create_acceptsTheFullyQualifiedNameOfABuiltIn() {
    assertThat(Allocator.create(GreedyAllocator.class.getName())).isInstanceOf(GreedyAllocator.class);
  }

  @Test
  void create_returnsANewInstanceEachTime_soRoundRobinStateIsNotShared() {
    Allocator a = Allocator.create("RoundRobin");
    Allocator b = Allocator.create("RoundRobin");
    assertThat(a).isNotSameAs(b);
    List<FakeDir> dirs = List.of(free(0, 100), free(1, 100));
    assertThat(a.allocate(dirs, 1).dirIndex()).isEqualTo(0);
    assertThat(b.allocate(dirs, 1).dirIndex()).as("b's turn is its own").isEqualTo(0);
  }

  @Test
  void create_loadsACustomClassByName() {
    Allocator allocator = Allocator.create(LastDirAllocator.class.getName());
    FakeDir last = free(2, 1);
    assertThat(allocator).isInstanceOf(LastDirAllocator.class);
    assertThat(allocator.allocate(List.of(free(0, 9), free(1, 9), last), 1)).isSameAs(last);
  }

  @Test
  void create_usesTheContextClassLoader() {
    Thread thread = Thread.currentThread();
    ClassLoader original = thread.getContextClassLoader();
    // A loader that knows no application classes: the test class must then not be found.
    thread.setContextClassLoader(new ClassLoader(null) {});
    try {
      assertThatThrownBy(() -> Allocator.create(LastDirAllocator.class.getName()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no such class");
    } finally {
      thread.setContextClassLoader(original);
    }
  }

  @Test
  void create_refusesAnUnknownName_namingIt_andListingTheShortNames() {
    assertThatThrownBy(() -> Allocator.create("MostFree"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'MostFree'")
        .hasMessageContaining("no such class")
        .hasMessageContaining("MaxFree, RoundRobin, Greedy");
  }

  @Test
  void create_refusesAClassThatIsNotAnAllocator() {
    assertThatThrownBy(() -> Allocator.create("java.lang.StringBuilder"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'java.lang.StringBuilder'")
        .hasMessageContaining("does not implement " + Allocator.class.getName());
  }

  @Test
  void create_refusesAClassWithoutAPublicNoArgConstructor() {
    String name = NeedsArgumentAllocator.class.getName();
    assertThatThrownBy(() -> Allocator.create(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("no public no-arg constructor");
  }

  @Test
  void create_refusesAnAbstractClass() {
    String name = AbstractAllocator.class.getName();
    assertThatThrownBy(() -> Allocator.create(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("abstract");
  }

  @Test
  void create_reportsAFailingConstructor_withItsCause() {
    String name = FailingAllocator.class.getName();
    assertThatThrownBy(() -> Allocator.create(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("boom in constructor")
        .hasCauseInstanceOf(IllegalStateException.class);
  }

  @Test
  void create_refusesABlankOrNullName() {
    assertThatThrownBy(() -> Allocator.create("  "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'  '");
    assertThatThrownBy(() -> Allocator.create(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'null'");
  }
}
